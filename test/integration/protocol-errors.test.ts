// What Node's HTTP parser refuses before any route runs (issue 10, finding 12), over a real socket: the
// contract's error shape, never Fastify's {"error","message","statusCode"}; a GET under /api that cannot
// be parsed is "not found" like any malformed GET parameter. The database plays no part here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as connectTcp } from 'node:net';
import type { AddressInfo } from 'node:net';
import { testInstallation, type TestInstallation } from '../support/installation.js';

let inst: TestInstallation;
let port: number;
before(async () => {
  inst = await testInstallation('sqlite');
  await inst.app.listen({ host: '127.0.0.1', port: 0 });
  port = (inst.app.server.address() as AddressInfo).port;
});
after(() => inst.close());

/** Sends `raw` bytes as they are and reads the whole answer (the server closes the connection). */
function exchange(raw: string | Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, '127.0.0.1', () => socket.write(raw));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

test('a raw space in a GET /api request line answers 404 {"error": "Not Found"}', async () => {
  const res = await exchange('GET /api/slots?schedule=1&reason=1&day=2026 06 02 HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.equal(res.status, 404, res.headers);
  assert.deepEqual(JSON.parse(res.body), { error: 'Not Found' });
  assert.match(res.headers, /content-type: application\/json/i);
});

test('a NUL byte in the request line answers in the contract shape', async () => {
  const res = await exchange(Buffer.from('GET /api/schedules\u0000x HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'));
  assert.ok(res.status === 404 || res.status === 400, res.headers);
  assert.deepEqual(Object.keys(JSON.parse(res.body)), ['error']);
});

test('a header section over the limit answers 431 {"error": ...}', async () => {
  const res = await exchange(`GET /api/schedules HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.equal(res.status, 431, res.headers);
  assert.deepEqual(JSON.parse(res.body), { error: 'Request Header Fields Too Large' });
});

test('a request line that is not HTTP at all answers 400 {"error": "Bad Request"}', async () => {
  const res = await exchange('HELLO\r\n\r\n');
  assert.equal(res.status, 400, res.headers);
  assert.deepEqual(JSON.parse(res.body), { error: 'Bad Request' });
});

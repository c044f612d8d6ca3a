// Database faults injected for real (issue 15, items 2-4): a PostgreSQL of the test's own frozen with
// SIGSTOP and stopped, an SQLite write lock held by another connection, and SIGTERM while a request is in
// flight on a kept-alive connection; each against a real `serve` process. The bounds asserted are the
// defaults documented in docs/operations.md ("Faults").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tcpConnect, type Socket } from 'node:net';
import SQLite from 'better-sqlite3';
import { describeEachDatabase, freshDatabase, freshSqlite, type TestDatabase } from '../support/databases.js';
import { readyInstallation, serve, type Ready, type ServeProcess } from '../support/processes.js';
import { OWN_POSTGRES_SKIP, ownPostgres, type OwnPostgres } from '../support/own-postgres.js';

interface Timed {
  status: number;
  ms: number;
  body: unknown;
  retryAfter: string | null;
}

/** one request, timed; never waits longer than 20 s (a hang shows as a failed assertion, not a stuck test) */
async function timed(origin: string, path: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(`${origin}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, ms: performance.now() - started, body, retryAfter: res.headers.get('retry-after') };
}

async function until(what: string, check: () => Promise<boolean>, withinMs = 20_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      if (await check()) return performance.now() - started;
    } catch {
      /* not yet */
    }
    if (performance.now() - started > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function firstReason(origin: string, ready: Ready): Promise<{ reason: number; day: string }> {
  const reasons = (await (await fetch(`${origin}/api/reasons?schedule=${ready.schedule}`, { headers: ready.headers })).json()) as {
    data: { id: number }[];
  };
  const reason = reasons.data[0]!.id;
  const days = (await (
    await fetch(`${origin}/api/days?schedule=${ready.schedule}&reason=${reason}`, { headers: ready.headers })
  ).json()) as {
    data: string[];
  };
  return { reason, day: days.data[2]! };
}

describe('a PostgreSQL that cannot answer [own postgres]', { skip: OWN_POSTGRES_SKIP }, () => {
  let pg: OwnPostgres | undefined;
  let server: ServeProcess | undefined;
  let ready: Ready;
  let reason: number;
  let day: string;
  before(async () => {
    pg = await ownPostgres();
    ready = await readyInstallation(pg.url);
    server = await serve(pg.url);
    ({ reason, day } = await firstReason(server.origin, ready));
  });
  after(async () => {
    pg?.thaw();
    await server?.stop();
    await pg?.destroy();
  });

  const days = () => timed(server!.origin, `/api/days?schedule=${ready.schedule}&reason=${reason}`, { headers: ready.headers });
  const book = (i: number) =>
    timed(server!.origin, '/api/bookings', {
      method: 'POST',
      headers: ready.headers,
      body: JSON.stringify({ schedule: ready.schedule, reason, slot: `${day} 10:00:00`, submission: { email: `f${i}@example.com` } }),
    });

  test('frozen (SIGSTOP): /healthz 503 within 2 s, reads 503 with Retry-After, a booking 500 with Retry-After; all back after SIGCONT', async (t) => {
    assert.equal((await days()).status, 200);
    pg!.freeze();
    try {
      const [health, read, booking] = await Promise.all([timed(server!.origin, '/healthz'), days(), book(1)]);
      t.diagnostic(`frozen: /healthz ${health.ms.toFixed(0)} ms, GET /api/days ${read.ms.toFixed(0)} ms, POST ${booking.ms.toFixed(0)} ms`);
      assert.equal(health.status, 503);
      assert.ok(health.ms < 2_000, `/healthz took ${health.ms} ms`);
      assert.equal(read.status, 503, JSON.stringify(read.body));
      assert.deepEqual(read.body, { error: 'Service Unavailable' });
      assert.equal(read.retryAfter, '5');
      // the statement bound (3 s) plus the client's margin (0.5 s), plus slack for a loaded machine
      assert.ok(read.ms < 6_000, `GET /api/days took ${read.ms} ms`);
      assert.equal(booking.status, 500);
      assert.deepEqual(booking.body, { error: 'The booking could not be saved' });
      assert.equal(booking.retryAfter, '5');
      assert.ok(booking.ms < 6_000, `POST /api/bookings took ${booking.ms} ms`);
      // while still frozen, a second round: connections left waiting must not make it slower
      const again = await Promise.all([timed(server!.origin, '/healthz'), days()]);
      assert.equal(again[0].status, 503);
      assert.ok(again[0].ms < 2_000, `/healthz took ${again[0].ms} ms`);
      assert.equal(again[1].status, 503);
      assert.ok(again[1].ms < 6_000, `GET /api/days took ${again[1].ms} ms`);
    } finally {
      pg!.thaw();
    }
    await until('/healthz 200 after SIGCONT', async () => (await timed(server!.origin, '/healthz')).status === 200, 10_000);
    await until('GET /api/days 200 after SIGCONT', async () => (await days()).status === 200, 10_000);
    assert.equal((await book(2)).status, 201);
  });

  test('stopped, then started again: 503 with Retry-After while down, 200 after', async (t) => {
    await pg!.stop();
    try {
      const [health, read, booking] = await Promise.all([timed(server!.origin, '/healthz'), days(), book(3)]);
      t.diagnostic(
        `stopped: /healthz ${health.ms.toFixed(0)} ms, GET /api/days ${read.ms.toFixed(0)} ms, POST ${booking.ms.toFixed(0)} ms`,
      );
      assert.equal(health.status, 503);
      assert.ok(health.ms < 2_000, `/healthz took ${health.ms} ms`);
      assert.equal(read.status, 503, JSON.stringify(read.body));
      assert.deepEqual(read.body, { error: 'Service Unavailable' });
      assert.equal(read.retryAfter, '5');
      assert.equal(booking.status, 500);
      assert.deepEqual(booking.body, { error: 'The booking could not be saved' });
      assert.equal(booking.retryAfter, '5');
      // the admin area: a page in its frame, 503 (its guard reads the installation's state first)
      const admin = await timed(server!.origin, '/admin/signin');
      assert.equal(admin.status, 503);
      assert.match(String(admin.body), /Temporarily unavailable/);
      assert.equal(admin.retryAfter, '5');
    } finally {
      await pg!.start();
    }
    await until('GET /api/days 200 after the restart', async () => (await days()).status === 200, 10_000);
    assert.equal((await timed(server!.origin, '/healthz')).status, 200);
  });
  test('SIGTERM while the database is frozen, a read in flight: exit 0 within the 10 s bound', async (t) => {
    assert.equal((await days()).status, 200);
    pg!.freeze();
    try {
      // a read waiting on the frozen database, and the mail worker's polls stuck on it too
      const inFlight = days().then(
        (r) => r.status,
        () => 'closed',
      );
      await new Promise((r) => setTimeout(r, 300));
      const started = performance.now();
      const { code } = await server!.stop('SIGTERM');
      const ms = performance.now() - started;
      t.diagnostic(`SIGTERM to exit with the database frozen: ${ms.toFixed(0)} ms (code ${code})`);
      assert.equal(code, 0, `exit after ${ms} ms:\n${server!.log()}`);
      assert.ok(ms < 10_000, `exit took ${ms} ms`);
      const read = await inFlight;
      assert.ok(read === 503 || read === 'closed', `the read in flight got ${read}`);
    } finally {
      pg!.thaw();
    }
  });
});

describe('SQLite write lock held by another connection', () => {
  let target: TestDatabase;
  let server: ServeProcess | undefined;
  before(() => {
    target = freshSqlite();
  });
  after(async () => {
    await server?.stop();
    await target.drop();
  });

  test('a booking answers 500 with Retry-After within the busy bound (2 s); reads go on (WAL)', async (t) => {
    const ready = await readyInstallation(target.url);
    server = await serve(target.url);
    const { reason, day } = await firstReason(server.origin, ready);
    const other = new SQLite(target.url.slice('sqlite:'.length));
    other.exec('begin immediate');
    try {
      const booking = await timed(server.origin, '/api/bookings', {
        method: 'POST',
        headers: ready.headers,
        body: JSON.stringify({ schedule: ready.schedule, reason, slot: `${day} 11:00:00`, submission: { email: 'l@example.com' } }),
      });
      t.diagnostic(`locked: POST ${booking.ms.toFixed(0)} ms`);
      assert.equal(booking.status, 500, JSON.stringify(booking.body));
      assert.deepEqual(booking.body, { error: 'The booking could not be saved' });
      assert.equal(booking.retryAfter, '5');
      assert.ok(booking.ms >= 1_500 && booking.ms < 4_000, `POST /api/bookings took ${booking.ms} ms`);
      const read = await timed(server.origin, `/api/days?schedule=${ready.schedule}&reason=${reason}`, { headers: ready.headers });
      assert.equal(read.status, 200);

      // ten bookings at once: each meets the lock on its own, none waits behind another's wait, and the
      // process keeps answering meanwhile (the driver waits for a lock synchronously: only briefly per try)
      const slots = ['09:00', '09:30', '10:00', '10:30', '11:30', '12:00', '12:30', '13:00', '13:30', '14:00'];
      const bookings = slots.map((time, i) =>
        timed(server!.origin, '/api/bookings', {
          method: 'POST',
          headers: ready.headers,
          body: JSON.stringify({ schedule: ready.schedule, reason, slot: `${day} ${time}:00`, submission: { email: `m${i}@example.com` } }),
        }),
      );
      await new Promise((r) => setTimeout(r, 300));
      const health = await timed(server.origin, '/healthz');
      const answered = await Promise.all(bookings);
      const slowest = Math.max(...answered.map((b) => b.ms));
      t.diagnostic(`locked: /healthz ${health.ms.toFixed(0)} ms beside 10 bookings; slowest booking ${slowest.toFixed(0)} ms`);
      assert.equal(health.status, 200);
      assert.ok(health.ms < 1_000, `/healthz took ${health.ms} ms while bookings waited for the lock`);
      assert.deepEqual(
        answered.map((b) => b.status),
        Array<number>(10).fill(500),
      );
      assert.ok(slowest < 6_000, `the slowest of 10 bookings took ${slowest} ms`);
    } finally {
      other.exec('rollback');
      other.close();
    }
  });
});

/** an HTTP/1.1 exchange on one raw socket, so the test controls keep-alive and when the body arrives */
function rawConnection(origin: string) {
  const { hostname, port } = new URL(origin);
  const socket: Socket = tcpConnect(Number(port), hostname);
  let received = '';
  let ended = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('close', () => (ended = true));
  socket.on('error', () => (ended = true));
  return {
    socket,
    write: (text: string) => socket.write(text),
    received: () => received,
    ended: () => ended,
    connected: new Promise<void>((ok) => socket.once('connect', ok)),
  };
}

describeEachDatabase('SIGTERM with a request in flight on a kept-alive connection', (dialect) => {
  let target: TestDatabase;
  before(async () => {
    target = await freshDatabase(dialect);
  });
  after(async () => {
    await target.drop();
  });

  test('the request is answered with Connection: close, the process exits 0 well under 10 s', async (t) => {
    const ready = await readyInstallation(target.url);
    const server = await serve(target.url);
    try {
      const { reason, day } = await firstReason(server.origin, ready);
      const conn = rawConnection(server.origin);
      await conn.connected;
      const host = new URL(server.origin).host;
      // one complete exchange: the connection is now kept alive
      conn.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      await until('first answer', async () => conn.received().includes('"status":"ok"'), 5_000);
      // a booking whose body is still arriving when SIGTERM comes
      const body = JSON.stringify({ schedule: ready.schedule, reason, slot: `${day} 12:00:00`, submission: { email: 'k@example.com' } });
      conn.write(
        `POST /api/bookings HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${ready.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      await new Promise((r) => setTimeout(r, 200));
      const started = performance.now();
      const exited = server.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      conn.write(body.slice(10));
      const { code } = await exited;
      const ms = performance.now() - started;
      t.diagnostic(`SIGTERM to exit: ${ms.toFixed(0)} ms (code ${code})`);
      assert.equal(code, 0, `exit after ${ms} ms:\n${server.log()}`);
      assert.ok(ms < 5_000, `exit took ${ms} ms`);
      const answer = conn.received().split('HTTP/1.1 ')[2] ?? '';
      assert.match(answer, /^201 /, conn.received());
      assert.match(answer, /\r\nconnection: close\r\n/i);
      await until('the server closed the connection', async () => conn.ended(), 2_000);
    } finally {
      await server.stop();
    }
  });
});

describeEachDatabase('SIGTERM with a request still arriving', (dialect) => {
  let target: TestDatabase;
  before(async () => {
    target = await freshDatabase(dialect);
  });
  after(async () => {
    await target.drop();
  });

  test("a request completed once shutdown has begun gets the contract's 503 with Retry-After, not Fastify's own", async (t) => {
    const ready = await readyInstallation(target.url);
    const server = await serve(target.url);
    try {
      const conn = rawConnection(server.origin);
      await conn.connected;
      const host = new URL(server.origin).host;
      // the request line and part of its headers: the connection is busy, so shutdown does not close it as idle
      conn.write(`GET /api/schedules HTTP/1.1\r\nHost: ${host}\r\n`);
      await new Promise((r) => setTimeout(r, 200));
      const exited = server.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      conn.write(`Authorization: Bearer ${ready.token}\r\n\r\n`);
      await until('an answer', async () => conn.received().includes('\r\n\r\n{'), 5_000);
      const answer = conn.received();
      t.diagnostic(answer.split('\r\n')[0] ?? '');
      assert.match(answer, /^HTTP\/1\.1 503 /, answer);
      assert.match(answer, /\r\nretry-after: 5\r\n/i, answer);
      assert.match(answer, /\r\nconnection: close\r\n/i, answer);
      assert.match(answer, /\r\n\r\n\{"error":"Service Unavailable"\}$/, answer);
      const { code } = await exited;
      assert.equal(code, 0, server.log());
    } finally {
      await server.stop();
    }
  });
});

describe('the OpenAPI document', () => {
  test('names the 503 with Retry-After on every operation, and Retry-After on POST /bookings 500', async () => {
    const target = freshSqlite();
    const server = await serve(target.url);
    try {
      const doc = (await (await fetch(`${server.origin}/api/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
      };
      const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([m, op]) => [`${m} ${path}`, op] as const),
      );
      assert.equal(operations.length, 6);
      for (const [name, op] of operations) assert.ok(op.responses['503']?.headers?.['Retry-After'], `${name}: 503 with Retry-After`);
      assert.ok(doc.paths['/bookings']!.post!.responses['500']!.headers?.['Retry-After']);
    } finally {
      await server.stop();
      await target.drop();
    }
  });
});

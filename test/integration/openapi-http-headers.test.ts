// The document declares what issue 12 added over HTTP (src/http/api/http-headers.ts), and stays valid 3.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { buildApp } from '../../src/http/build-app.js';

test('openapi.json declares Idempotency-Key, Idempotent-Replayed, X-Request-Id, RateLimit-*, Retry-After, WWW-Authenticate and 405', async () => {
  const db = connect('sqlite::memory:');
  await migrate(db);
  const app = await buildApp({ db });
  const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  await app.close();
  await db.close();
  const doc = res.json();
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));

  const booking = doc.paths['/bookings'].post;
  const key = booking.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
  assert.deepEqual([key.in, key.required, key.schema.maxLength], ['header', false, 255]);
  for (const status of ['201', '400', '404']) assert.ok(booking.responses[status].headers['Idempotent-Replayed'], status);

  for (const [path, item] of Object.entries<Record<string, { responses: Record<string, { headers: Record<string, unknown> }> }>>(
    doc.paths,
  )) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        const where = `${method} ${path} ${status}`;
        assert.ok(headers.includes('X-Request-Id'), where);
        const rateLimited = !['401', '503'].includes(status);
        for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
          assert.equal(headers.includes(name), rateLimited, `${where} ${name}`);
        if (status === '429') assert.ok(headers.includes('Retry-After'), where);
        if (status === '401') assert.ok(headers.includes('WWW-Authenticate'), where);
      }
    }
  }
  // a 405 belongs to no operation: the document says it in its description
  assert.match(doc.info.description, /405 `\{"error": "Method Not Allowed"\}` with an `Allow` header/);
});

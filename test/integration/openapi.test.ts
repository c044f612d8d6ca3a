// /api/openapi.json is a valid OpenAPI 3.1 document, checked by two independent tools (a 3.1 validator and
// Redocly's recommended-strict lint), and it is a document a client generator makes a good client from:
// named schemas, integer ids, typed submission values, each error's exact messages, examples everywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { servedDocument } from '../../scripts/openapi-document.js';

const doc = await servedDocument();
const OPERATIONS = {
  'get /schedules': ['200', '401', '429', '503'],
  'get /reasons': ['200', '401', '404', '429', '503'],
  'get /days': ['200', '401', '404', '429', '503'],
  'get /slots': ['200', '401', '404', '429', '503'],
  'get /forms': ['200', '401', '404', '429', '503'],
  'post /bookings': ['201', '400', '401', '404', '413', '415', '429', '500', '503'],
};
const operations = Object.entries(OPERATIONS).map(([key, statuses]) => {
  const [method, path] = key.split(' ') as [string, string];
  return { key, statuses, operation: doc.paths[path][method] };
});

test('openapi.json: valid 3.1, relative server /api, every call and status described', async () => {
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.servers[0].url, '/api');
  assert.equal(doc.servers.length, 1);
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/bookings', '/days', '/forms', '/reasons', '/schedules', '/slots']);
  for (const { key, statuses, operation } of operations) {
    assert.deepEqual(Object.keys(operation.responses).sort(), [...statuses].sort(), key);
    assert.deepEqual(operation.security, [{ bearerAuth: [] }]);
    assert.ok(operation.description?.length > 40, `${key} is described`);
    assert.equal(operation.tags.length, 1, `${key} has a tag`);
    assert.ok(
      doc.tags.some((t: { name: string }) => t.name === operation.tags[0]),
      `${key}'s tag is declared`,
    );
  }
  assert.equal(doc.info.license.name, 'Proprietary');
  assert.ok(doc.info.contact.name);
  assert.ok(!JSON.stringify(doc).includes('/admin'), 'the admin area is not part of the API document');
  assert.ok(!JSON.stringify(doc).includes('x-described-as'), 'the validation-only annotations are resolved');
});

test('named schemas in components.schemas, referenced by the operations', () => {
  const names = ['Schedule', 'Reason', 'Day', 'Slot', 'FormField', 'BookingRequest', 'BookingResponse', 'Error', 'BookingError'];
  assert.deepEqual(Object.keys(doc.components.schemas).sort(), [...names].sort());
  const json = (path: string, status: string, method = 'get') =>
    doc.paths[path][method].responses[status].content['application/json'].schema;
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  assert.deepEqual(json('/schedules', '200').properties.data.items, ref('Schedule'));
  assert.deepEqual(json('/reasons', '200').properties.data.items, ref('Reason'));
  assert.deepEqual(json('/days', '200').properties.data.items, ref('Day'));
  assert.deepEqual(json('/slots', '200').properties.data.items, ref('Slot'));
  assert.deepEqual(json('/forms', '200').properties.data.additionalProperties, ref('FormField'));
  assert.deepEqual(doc.paths['/bookings'].post.requestBody.content['application/json'].schema.allOf, [ref('BookingRequest')]);
  assert.deepEqual(json('/bookings', '201', 'post').allOf, [ref('BookingResponse')]);
  assert.deepEqual(json('/bookings', '400', 'post').allOf, [ref('BookingError')]);
  for (const { key, statuses, operation } of operations) {
    for (const status of statuses.filter((s) => s >= '401' && !(key === 'post /bookings' && s === '400'))) {
      assert.deepEqual(operation.responses[status].content['application/json'].schema.allOf[0], ref('Error'), `${key} ${status}`);
    }
  }
});

test('ids are integers, days are dates, slots have their pattern, submission values are scalars', () => {
  for (const { key, operation } of operations.filter((o) => o.key !== 'get /schedules' && o.key !== 'post /bookings')) {
    const params = Object.fromEntries(operation.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    assert.deepEqual(params.schedule, { type: 'integer', minimum: 1, maximum: 2147483647 }, key);
    if (key !== 'get /reasons') assert.deepEqual(params.reason, { type: 'integer', minimum: 1, maximum: 2147483647 }, key);
    if (key === 'get /slots') assert.equal(params.day.format, 'date');
    if (key === 'get /forms') assert.equal(params.slot.pattern, '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$');
  }
  assert.equal(doc.components.schemas.Day.format, 'date');
  const submission = doc.components.schemas.BookingRequest.properties.submission;
  assert.deepEqual(submission.additionalProperties.type, ['string', 'number', 'boolean']);
});

test('each error status lists its exact messages; the POST 404 speaks of what POST answers 404 for', () => {
  const messages = (key: string, status: string) => {
    const { operation } = operations.find((o) => o.key === key)!;
    return operation.responses[status].content['application/json'].schema.allOf[1].properties.error.enum;
  };
  assert.deepEqual(messages('post /bookings', '404'), ['Schedule not found', 'Reason not found', 'Time not available']);
  assert.deepEqual(messages('get /reasons', '404'), ['Schedule not found']);
  assert.deepEqual(messages('get /days', '404'), ['Schedule not found', 'Reason not found']);
  assert.deepEqual(messages('get /slots', '404'), ['Schedule not found', 'Reason not found', 'Day not found']);
  assert.deepEqual(messages('get /forms', '404'), ['Schedule not found', 'Reason not found', 'Time not available']);
  assert.deepEqual(messages('get /schedules', '401'), ['Unauthorized']);
  assert.deepEqual(messages('get /schedules', '429'), ['Too Many Requests']);
  assert.deepEqual(messages('get /schedules', '503'), ['API disabled', 'Not configured', 'Service Unavailable']);
  const post404 = doc.paths['/bookings'].post.responses['404'].description;
  assert.doesNotMatch(post404, /parameter|badly formatted/, 'POST answers 400, not 404, for a malformed body');
  assert.ok(doc.paths['/bookings'].post.responses['429'].headers['Retry-After'], 'Retry-After is declared on 429');
  for (const path of ['/days', '/slots', '/forms']) assert.ok(doc.paths[path].get.responses['200'].headers['Time-Zone'], path);
});

test('every request and response body has an example', () => {
  for (const { key, statuses, operation } of operations) {
    for (const status of statuses) {
      const media = operation.responses[status].content['application/json'];
      assert.ok(media.example ?? Object.keys(media.examples ?? {}).length, `${key} ${status} has an example`);
    }
  }
  assert.ok(doc.paths['/bookings'].post.requestBody.content['application/json'].examples.booking.value.submission);
});

test('Redocly CLI: `lint --extends recommended-strict` finds no problem in the served document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const lint = spawnSync(
      process.execPath,
      ['node_modules/@redocly/cli/bin/cli.js', 'lint', '--extends', 'recommended-strict', '--format', 'stylish', file],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      },
    );
    assert.equal(lint.status, 0, `${lint.stdout}\n${lint.stderr}`);
    assert.match(lint.stderr + lint.stdout, /is valid/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

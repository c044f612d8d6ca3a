// /api/openapi.json is a valid OpenAPI 3.1 document, checked by an independent validator, and it
// describes every call with every status the contract lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { buildApp } from '../../src/http/build-app.js';

test('openapi.json: valid 3.1, relative server /api, every call and status described', async () => {
  const db = connect('sqlite::memory:');
  await migrate(db);
  const app = await buildApp({ db });
  const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  await app.close();
  await db.close();
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(doc.openapi, '3.1.0');
  assert.deepEqual(doc.servers, [{ url: '/api' }]);
  const expected: Record<string, string[]> = {
    'get /schedules': ['200', '401', '429', '503'],
    'get /reasons': ['200', '401', '404', '429', '503'],
    'get /days': ['200', '401', '404', '429', '503'],
    'get /slots': ['200', '401', '404', '429', '503'],
    'get /forms': ['200', '401', '404', '429', '503'],
    'post /bookings': ['201', '400', '401', '404', '413', '415', '429', '500', '503'],
  };
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/bookings', '/days', '/forms', '/reasons', '/schedules', '/slots']);
  for (const [key, statuses] of Object.entries(expected)) {
    const [method, path] = key.split(' ') as [string, string];
    const operation = doc.paths[path][method];
    assert.deepEqual(Object.keys(operation.responses).sort(), statuses.sort(), key);
    for (const status of statuses.filter((s) => s >= '400')) {
      const schema = operation.responses[status].content['application/json'].schema;
      assert.deepEqual(schema.required, ['error'], `${key} ${status} error body`);
    }
    assert.deepEqual(operation.security, [{ bearerAuth: [] }]);
  }
  assert.ok(!JSON.stringify(doc).includes('/admin'), 'the admin area is not part of the API document');
});

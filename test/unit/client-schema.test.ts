// The committed client (clients/typescript/src/schema.generated.ts) is what `npm run client:generate`
// makes of the document the server serves now: a change of a route schema without regenerating fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientSchemaSource, committedClientSchema, servedDocument } from '../../scripts/openapi-document.js';

test('the committed client types are generated from the current document (else: npm run client:generate)', async () => {
  const fresh = await clientSchemaSource(await servedDocument());
  assert.ok(fresh === committedClientSchema(), 'clients/typescript/src/schema.generated.ts is stale: run `npm run client:generate`');
});

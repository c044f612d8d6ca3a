// The OpenAPI document exactly as the server serves it, built in-process (no server, no database file),
// and the client's TypeScript types generated from it with openapi-typescript. One function each, used by
// `npm run client:generate` and by the test that fails when the committed client is stale.
import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { connect } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { buildApp } from '../src/http/build-app.js';

/** The generated file of the TypeScript client (committed; never edited by hand). */
export const CLIENT_SCHEMA_FILE = new URL('../clients/typescript/src/schema.generated.ts', import.meta.url);

const HEADER = `// Generated from /api/openapi.json by \`npm run client:generate\` (scripts/openapi-document.ts) with
// openapi-typescript. Do not edit: change the route schemas (src/http/api/) and regenerate.

`;

export async function servedDocument(): Promise<any> {
  const db = connect('sqlite::memory:');
  try {
    await migrate(db);
    const app = await buildApp({ db });
    try {
      const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
      if (res.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${res.statusCode}`);
      return res.json();
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
  }
}

/** The content of CLIENT_SCHEMA_FILE for this document. */
export async function clientSchemaSource(document: unknown): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0]);
  return HEADER + astToString(ast);
}

export const committedClientSchema = () => readFileSync(CLIENT_SCHEMA_FILE, 'utf8');

// npm run client:generate: regenerates clients/typescript/src/schema.generated.ts from the document the
// server serves (built in-process: no server, no database needed).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLIENT_SCHEMA_FILE, clientSchemaSource, servedDocument } from './openapi-document.js';

writeFileSync(CLIENT_SCHEMA_FILE, await clientSchemaSource(await servedDocument()));
console.log(`wrote ${fileURLToPath(CLIENT_SCHEMA_FILE)}`);

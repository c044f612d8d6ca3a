// The benchmark's baseline: a bare node:http server answering a fixed JSON body of the given size,
// so the API's figures can be read against what this machine does with no framework and no database.
import { createServer } from 'node:http';

const size = Number(process.argv[2] ?? 300);
const items = [];
while (JSON.stringify({ data: items }).length + 22 <= size) items.push('2026-01-01 00:00:00');
const body = JSON.stringify({ data: items }).padEnd(size, ' ');
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

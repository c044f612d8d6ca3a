// What compression costs (issue 12): the same seeded SQLite installation served by the compiled server in a
// child process, loaded with autocannon, every case interleaved with the others round by round so that
// drift of the machine's load falls on all alike. Small answers (/schedules ~34 bytes, /slots of one day
// ~250 bytes) are sent as they are; /days (365 days, ~4.8 KB) is compressed when the client asks, once
// per cached answer (src/http/api/compressed-answers.ts). The ratio column compares each /days case with
// the plain /days answer measured in the same rounds.
// Run: npm run build && node --import tsx bench/compression.ts   (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS)
import { fork } from 'node:child_process';
import { get } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, type Figures } from './measure.js';
import { seedInstallation } from './seed.js';
import type * as ConnectModule from '../src/db/connect.js';
import type * as BuildAppModule from '../src/http/build-app.js';
import type * as InstallationModule from '../src/app/installation.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

async function serve(databaseUrl: string): Promise<void> {
  // the compiled server, as `booking serve` runs it
  const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
  const { connect } = (await import(dist('db/connect.js'))) as typeof ConnectModule;
  const { buildApp } = (await import(dist('http/build-app.js'))) as typeof BuildAppModule;
  const { setOperatorSetting } = (await import(dist('app/installation.js'))) as typeof InstallationModule;
  const db = connect(databaseUrl);
  await setOperatorSetting(db, 'api.rate_limit_per_minute', '9999999');
  const app = await buildApp({ db });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as { port: number }).port });
}

function bytesSent(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve(bytes));
    }).on('error', reject);
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-compress-'));
  const url = `sqlite:${join(dir, 'bench.db')}`;
  const seeded = await seedInstallation(url);
  const server = fork(fileURLToPath(import.meta.url), ['serve', url], { execArgv: ['--import', 'tsx'] });
  const { port } = await new Promise<{ port: number }>((resolve) => server.once('message', (m) => resolve(m as never)));
  const q = `schedule=${seeded.scheduleId}&reason=${seeded.reasonId}`;
  const asks = 'gzip, deflate, br';
  const cases = [
    { name: '`/schedules` (small), asks for gzip/br', path: '/api/schedules', encoding: asks },
    { name: '`/slots` one day (small), asks for gzip/br', path: `/api/slots?${q}&day=${seeded.busiestDay}`, encoding: asks },
    { name: '`/days` (large), plain', path: `/api/days?${q}`, encoding: undefined },
    { name: '`/days`, gzip', path: `/api/days?${q}`, encoding: 'gzip' },
    { name: '`/days`, br', path: `/api/days?${q}`, encoding: 'br' },
  ].map((c) => ({ ...c, headers: { authorization: `Bearer ${seeded.token}`, ...(c.encoding ? { 'accept-encoding': c.encoding } : {}) } }));
  const figures = cases.map(() => [] as Figures[]);
  const bytes: number[] = [];
  try {
    for (const c of cases) {
      bytes.push(await bytesSent(port, c.path, c.headers));
      await load(`http://127.0.0.1:${port}${c.path}`, { connections, seconds: 1, headers: c.headers });
    }
    for (let round = 0; round < rounds; round++)
      for (const [i, c] of cases.entries())
        figures[i]!.push(await load(`http://127.0.0.1:${port}${c.path}`, { connections, seconds, headers: c.headers }));
  } finally {
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (f: Figures[], key: 'rps' | 'p50' | 'p99') => f.reduce((s, x) => s + x[key], 0) / f.length;
  const plainDays = mean(figures[2]!, 'rps');
  console.log(
    `\ncompression: ${connections} connections, ${rounds} rounds of ${seconds} s per case, interleaved, after 1 s of warm-up each\n`,
  );
  console.log('| answer | bytes sent | req/s | / plain `/days` | p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|');
  for (const [i, c] of cases.entries()) {
    const rps = mean(figures[i]!, 'rps');
    const ratio = c.path.startsWith('/api/days') ? (rps / plainDays).toFixed(2) : '';
    console.log(
      `| ${c.name} | ${bytes[i]} | ${rps.toFixed(0)} | ${ratio} | ${mean(figures[i]!, 'p50').toFixed(2)} | ${mean(figures[i]!, 'p99').toFixed(2)} |`,
    );
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3]!);
else await main();

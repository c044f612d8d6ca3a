// What @fastify/compress costs (issue 12): the same answers from two servers in one process, on one seeded
// SQLite database, one built with compression (the default) and one without, measured side by side and
// interleaved. Small answers (/schedules, ~70 bytes; /slots of one day, under 1 KiB) pay the plugin's hooks
// but are sent as they are; /days (365 days, ~5 KiB) is compressed when the client asks for gzip/br.
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

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);

async function serveBoth(databaseUrl: string): Promise<void> {
  // the compiled server, as `booking serve` runs it
  const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
  const { connect } = (await import(dist('db/connect.js'))) as typeof ConnectModule;
  const { buildApp } = (await import(dist('http/build-app.js'))) as typeof BuildAppModule;
  const { setOperatorSetting } = (await import(dist('app/installation.js'))) as typeof InstallationModule;
  const db = connect(databaseUrl);
  await setOperatorSetting(db, 'api.rate_limit_per_minute', '9999999');
  const ports: number[] = [];
  for (const compression of [true, false]) {
    const app = await buildApp({ db, compression });
    await app.listen({ host: '127.0.0.1', port: 0 });
    ports.push((app.server.address() as { port: number }).port);
  }
  process.send!({ ports });
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
  const { ports } = await new Promise<{ ports: [number, number] }>((resolve) => server.once('message', (m) => resolve(m as never)));
  const q = `schedule=${seeded.scheduleId}&reason=${seeded.reasonId}`;
  const cases = [
    { name: '/schedules (small)', path: '/api/schedules', encoding: 'gzip, deflate, br' },
    { name: '/slots, one day (small)', path: `/api/slots?${q}&day=${seeded.busiestDay}`, encoding: 'gzip, deflate, br' },
    { name: '/days (large), no Accept-Encoding', path: `/api/days?${q}`, encoding: undefined },
    { name: '/days (large), Accept-Encoding gzip', path: `/api/days?${q}`, encoding: 'gzip' },
    { name: '/days (large), Accept-Encoding br', path: `/api/days?${q}`, encoding: 'br' },
  ];
  const results = new Map<string, { with: Figures[]; without: Figures[]; bytes: [number, number] }>();
  try {
    for (const c of cases) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${seeded.token}`,
        ...(c.encoding ? { 'accept-encoding': c.encoding } : {}),
      };
      // the bytes on the wire (fetch would ask for gzip and decode the body itself)
      const wire = await Promise.all(ports.map((port) => bytesSent(port, c.path, headers)));
      for (const port of ports) await load(`http://127.0.0.1:${port}${c.path}`, { connections, seconds: 1, headers });
      const entry = { with: [] as Figures[], without: [] as Figures[], bytes: wire as [number, number] };
      for (let round = 0; round < rounds; round++) {
        // interleaved, so drift of the machine's load falls on both alike
        entry.with.push(await load(`http://127.0.0.1:${ports[0]}${c.path}`, { connections, seconds, headers }));
        entry.without.push(await load(`http://127.0.0.1:${ports[1]}${c.path}`, { connections, seconds, headers }));
      }
      results.set(c.name, entry);
    }
  } finally {
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (figures: Figures[], key: 'rps' | 'p50' | 'p99') => figures.reduce((s, f) => s + f[key], 0) / figures.length;
  console.log(`\ncompression: ${connections} connections, ${rounds} x ${seconds} s per server, interleaved, after 1 s of warm-up each\n`);
  console.log(
    '| answer | bytes sent with / without | req/s with | req/s without | ratio | p50 ms with / without | p99 ms with / without |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, r] of results) {
    const rpsWith = mean(r.with, 'rps');
    const rpsWithout = mean(r.without, 'rps');
    console.log(
      `| ${name} | ${r.bytes[0]} / ${r.bytes[1]} | ${rpsWith.toFixed(0)} | ${rpsWithout.toFixed(0)} | ${(rpsWith / rpsWithout).toFixed(2)} | ${mean(r.with, 'p50').toFixed(2)} / ${mean(r.without, 'p50').toFixed(2)} | ${mean(r.with, 'p99').toFixed(2)} / ${mean(r.without, 'p99').toFixed(2)} |`,
    );
  }
}

if (process.argv[2] === 'serve') await serveBoth(process.argv[3]!);
else await main();

#!/usr/bin/env node
// The one test command (npm test): every *.test.ts under test/, through tsx, with node's test runner.
// Builds dist/ first: tests that spawn bin/booking run the compiled JavaScript, never a stale build.
// Says plainly when the PostgreSQL tier is skipped; under CI=true a missing PostgreSQL is a failure.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv.slice(2);

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const reachable = (port) =>
  new Promise((ok) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.on('connect', () => {
      socket.destroy();
      ok(true);
    });
    socket.on('error', () => ok(false));
    socket.on('timeout', () => {
      socket.destroy();
      ok(false);
    });
  });

if (!(await reachable(5432))) {
  if (process.env.CI === 'true') {
    console.error('PostgreSQL is not reachable at 127.0.0.1:5432, and under CI=true the PostgreSQL tier must run.');
    process.exit(1);
  }
  console.log('NOTE: PostgreSQL is not reachable at 127.0.0.1:5432: the PostgreSQL tier of every database test is SKIPPED.');
}

const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error('npm run build failed: the tests would run bin/booking on a stale or missing dist/.');
  process.exit(build.status ?? 1);
}

const files = (only.length ? only : find(join(root, 'test'))).map((f) => relative(root, f)).sort();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);

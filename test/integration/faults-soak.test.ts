// A short soak under faults (issue 15, "Done when"): bookings at a steady rate through a real `serve` on
// a PostgreSQL of the test's own while the database restarts and freezes, the serve process is SIGKILLed
// and started again, and finally SIGTERMed under load. At the end: every 201 is stored, no request took
// longer than the bound, the SIGTERM exit is 0 within the bound. By default a reduced run (about 40 s);
// SOAK=1 runs it six times longer at twice the rate (about 4 minutes).
// (Mail is not part of this run: no SMTP server, the messages wait in the outbox; see the mail tests.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { readyInstallation, serve, type Ready, type ServeProcess } from '../support/processes.js';
import { OWN_POSTGRES_SKIP, ownPostgres, type OwnPostgres } from '../support/own-postgres.js';

const LONG = process.env.SOAK === '1';
const SCALE = LONG ? 6 : 1;
const RATE_PER_S = LONG ? 20 : 10;
/** the longest a request may take during a fault: statement bound 3 s + 0.5 s, a connect bound 2 s, slack */
const REQUEST_BOUND_MS = 7_000;
/** shutdown: drain bound 5 s + the mail worker's 1 s + closing; the process's own timer is 10 s */
const EXIT_BOUND_MS = 8_000;
/** as in the fault-injection run of issue 15 (10 s); the reduced run 8 s, still over REQUEST_BOUND_MS */
const FREEZE_MS = LONG ? 10_000 : 8_000;

interface Outcome {
  status: number | 'no connection' | 'aborted';
  ms: number;
  bookingId?: number;
  retryAfter?: string | null;
}

describe('soak: bookings through database faults and process signals [own postgres]', { skip: OWN_POSTGRES_SKIP }, () => {
  let db: OwnPostgres | undefined;
  let server: ServeProcess | undefined;
  before(async () => {
    db = await ownPostgres();
  });
  after(async () => {
    db?.thaw();
    await server?.stop('SIGKILL');
    await db?.destroy();
  });

  test(
    `${LONG ? 'long' : 'reduced'} run: every 201 stored, no request over the bound, exit 0 within the bound`,
    { timeout: 600_000 },
    async (t) => {
      const ready: Ready = await readyInstallation(db!.url);
      server = await serve(db!.url);
      const reasons = (await (
        await fetch(`${server.origin}/api/reasons?schedule=${ready.schedule}`, { headers: ready.headers })
      ).json()) as {
        data: { id: number }[];
      };
      const reason = reasons.data[0]!.id;
      const days = (
        (await (
          await fetch(`${server.origin}/api/days?schedule=${ready.schedule}&reason=${reason}`, { headers: ready.headers })
        ).json()) as {
          data: string[];
        }
      ).data.slice(2);
      const outcomes: Outcome[] = [];
      const inFlight = new Set<Promise<void>>();
      let n = 0;
      const book = () => {
        const i = n++;
        const origin = server!.origin;
        const hour = 8 + (i % 12);
        const slot = `${days[Math.floor(i / 12) % days.length]} ${String(hour).padStart(2, '0')}:00:00`;
        const started = performance.now();
        const p = (async () => {
          try {
            const res = await fetch(`${origin}/api/bookings`, {
              method: 'POST',
              headers: ready.headers,
              body: JSON.stringify({ schedule: ready.schedule, reason, slot, submission: { email: `soak${i}@example.com` } }),
              signal: AbortSignal.timeout(30_000),
            });
            const body = (await res.json()) as { booking_id?: number };
            outcomes.push({
              status: res.status,
              ms: performance.now() - started,
              bookingId: body.booking_id,
              retryAfter: res.headers.get('retry-after'),
            });
          } catch (e) {
            const aborted = (e as Error).name === 'TimeoutError';
            outcomes.push({ status: aborted ? 'aborted' : 'no connection', ms: performance.now() - started });
          }
        })();
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      };
      const load = setInterval(book, 1000 / RATE_PER_S);
      const wait = (s: number) => new Promise((r) => setTimeout(r, s * 1000 * SCALE));
      const phases: string[] = [];
      try {
        await wait(4);
        phases.push('database restart');
        await db!.restart();
        await wait(4);
        // longer than the request bound: a request that waited for the server would break it
        phases.push(`database frozen ${FREEZE_MS / 1000} s`);
        db!.freeze();
        await new Promise((r) => setTimeout(r, FREEZE_MS));
        db!.thaw();
        await wait(4);
        phases.push('serve SIGKILL and start again');
        const killed = await server.stop('SIGKILL');
        assert.equal(killed.signal, 'SIGKILL');
        server = await serve(db!.url);
        await wait(4);
        phases.push('serve SIGTERM under load');
        const started = performance.now();
        const exited = await server.stop('SIGTERM');
        const exitMs = performance.now() - started;
        t.diagnostic(`SIGTERM under load: exit ${exited.code} after ${exitMs.toFixed(0)} ms`);
        assert.equal(exited.code, 0, server.log());
        assert.ok(exitMs < EXIT_BOUND_MS, `exit took ${exitMs} ms`);
      } finally {
        clearInterval(load);
        db!.thaw();
      }
      await Promise.all(inFlight);

      const count = (s: Outcome['status']) => outcomes.filter((o) => o.status === s).length;
      const slowest = Math.max(...outcomes.map((o) => o.ms));
      t.diagnostic(
        `${outcomes.length} bookings sent (${phases.join(', ')}): 201 ${count(201)}, 500 ${count(500)}, 503 ${count(503)}, ` +
          `no connection ${count('no connection')}, aborted ${count('aborted')}; slowest ${slowest.toFixed(0)} ms`,
      );
      const other = outcomes.filter((o) => ![201, 500, 503, 'no connection'].includes(o.status as never));
      assert.deepEqual(other, [], 'only 201, a 500/503 with Retry-After, or a refused connection');
      assert.ok(
        outcomes.filter((o) => o.status === 500 || o.status === 503).every((o) => o.retryAfter === '5'),
        'every 500/503 carries Retry-After',
      );
      assert.ok(slowest < REQUEST_BOUND_MS, `a request took ${slowest} ms`);
      assert.ok(count(201) > outcomes.length / 2, 'most bookings went through');

      const ids = outcomes.filter((o) => o.status === 201).map((o) => o.bookingId!);
      const client = new pg.Client({ connectionString: db!.url });
      await client.connect();
      try {
        const stored = await client.query<{ n: string }>('select count(*) as n from bookings where id = any($1)', [ids]);
        assert.equal(Number(stored.rows[0]!.n), ids.length, 'every 201 is stored');
      } finally {
        await client.end();
      }
    },
  );
});

// A short soak under faults (issue 15, "Done when"): bookings at a steady rate through a real `serve` on
// a PostgreSQL of the test's own, delivering its mail to a real SMTP server, while the SMTP server stops
// for a few seconds, the database restarts and freezes, the serve process is SIGKILLed and started again,
// and finally SIGTERMed under load. Then a fresh `serve` (no load) drains the outbox. At the end: every
// 201 is stored, no request took longer than the bound, the SIGTERM exits are 0 within the bound, every
// outbox row is 'sent' and every message arrived exactly once (by Message-ID, and by recipient, calendar
// method and booking). By default a reduced run; SOAK=1 runs the load phases six times longer at twice
// the rate.
//
// The mail drain is bounded by the worker's own timings, which are not configurable from the environment:
// a message whose failure could not be recorded (the database away) keeps its claim for 2 minutes; a
// failed send is retried after 15-30 s, then 30-60 s. The wait polls and ends as soon as everything is sent.
//
// The SIGKILL is aimed: serve is first stopped (SIGSTOP), and killed only when no message is in the
// window between the SMTP server's acceptance and the 'sent' record, and preferably when none is claimed
// at all. A kill inside that window sends the message again when its claim expires, by design (the gap
// docs/mail.md names, recognisable by its stable Message-ID; test/integration/mail-workers.test.ts and
// mail-db-faults.test.ts cover it); a soak that asserts "exactly once" must not land there by chance.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { readyInstallation, serve, type Ready, type ServeProcess } from '../support/processes.js';
import { OWN_POSTGRES_SKIP, ownPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { messageIdOf, messageKey, TestSmtpServer, until } from './mail-support.js';

const LONG = process.env.SOAK === '1';
const SCALE = LONG ? 6 : 1;
const RATE_PER_S = LONG ? 20 : 10;
/** the longest a request may take during a fault: statement bound 3 s + 0.5 s, a connect bound 2 s, slack */
const REQUEST_BOUND_MS = 7_000;
/** shutdown: drain bound 5 s + the mail worker's 1 s + closing; the process's own timer is 10 s */
const EXIT_BOUND_MS = 8_000;
/** as in the fault-injection run of issue 15 (10 s); the reduced run 8 s, still over REQUEST_BOUND_MS */
const FREEZE_MS = LONG ? 10_000 : 8_000;
/** the SMTP server stopped (listener closed, open connections answered 421 and closed) */
const SMTP_STOP_MS = LONG ? 10_000 : 3_000;
/**
 * the outbox drained after the last fault: a claim whose outcome could not be recorded holds 2 minutes,
 * a retry waits up to 30 s, then up to 60 s (outbox-delivery.ts defaults); polled, not slept
 */
const DRAIN_BOUND_MS = 200_000;
const CLAIM_MS = 120_000;
const MAIL_FROM = 'desk@soak.example';

interface Outcome {
  status: number | 'no connection' | 'aborted';
  ms: number;
  bookingId?: number;
  email: string;
  retryAfter?: string | null;
}

describe('soak: bookings through database faults and process signals [own postgres]', { skip: OWN_POSTGRES_SKIP }, () => {
  let db: OwnPostgres | undefined;
  let server: ServeProcess | undefined;
  let smtp: TestSmtpServer | undefined;
  before(async () => {
    db = await ownPostgres();
    smtp = await TestSmtpServer.start();
    smtp.closeTimeoutMs = 100;
  });
  after(async () => {
    try {
      db?.thaw();
    } catch {
      /* the server is gone already */
    }
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGCONT');
    await server?.stop('SIGKILL');
    await smtp?.down();
    await db?.destroy();
  });

  test(
    `${LONG ? 'long' : 'reduced'} run: every 201 stored, no request over the bound, exit 0 within the bound`,
    { timeout: 600_000 },
    async (t) => {
      const ready: Ready = await readyInstallation(db!.url);
      const env = { SMTP_URL: smtp!.url, MAIL_FROM, LOG_LEVEL: 'warn' };
      server = await serve(db!.url, env);
      // a connection per query: the database restarts under the soak
      const client = { query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => once<R>(db!.url, text, values) };
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
        const email = `soak${i}@example.com`;
        const p = (async () => {
          try {
            const res = await fetch(`${origin}/api/bookings`, {
              method: 'POST',
              headers: ready.headers,
              body: JSON.stringify({ schedule: ready.schedule, reason, slot, submission: { email } }),
              signal: AbortSignal.timeout(30_000),
            });
            const body = (await res.json()) as { booking_id?: number };
            outcomes.push({
              status: res.status,
              ms: performance.now() - started,
              bookingId: body.booking_id,
              email,
              retryAfter: res.headers.get('retry-after'),
            });
          } catch (e) {
            const aborted = (e as Error).name === 'TimeoutError';
            outcomes.push({ status: aborted ? 'aborted' : 'no connection', ms: performance.now() - started, email });
          }
        })();
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      };
      const load = setInterval(book, 1000 / RATE_PER_S);
      const wait = (s: number) => new Promise((r) => setTimeout(r, s * 1000 * SCALE));
      const phases: string[] = [];
      const exits: { code: number | null; ms: number }[] = [];
      let killAttempts: number | undefined;
      try {
        await wait(4);
        phases.push(`SMTP server stopped ${SMTP_STOP_MS / 1000} s`);
        await smtp!.down();
        await new Promise((r) => setTimeout(r, SMTP_STOP_MS));
        await smtp!.up();
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
        killAttempts = await killWhenNoMailInFlight(server, db!.url, smtp!);
        const killed = await server.stop('SIGKILL');
        assert.equal(killed.signal, 'SIGKILL');
        server = await serve(db!.url, env);
        await wait(4);
        phases.push('serve SIGTERM under load');
        const started = performance.now();
        const exited = await server.stop('SIGTERM');
        const exitMs = performance.now() - started;
        exits.push({ code: exited.code, ms: exitMs });
        t.diagnostic(`SIGTERM under load: exit ${exited.code} after ${exitMs.toFixed(0)} ms`);
        assert.equal(exited.code, 0, server.log());
        assert.ok(exitMs < EXIT_BOUND_MS, `exit took ${exitMs} ms`);
      } finally {
        clearInterval(load);
        db!.thaw();
      }
      await Promise.all(inFlight);

      // the outbox drains through a fresh serve, no load; polled until every row is sent, within the bound
      const drainStarted = performance.now();
      server = await serve(db!.url, env);
      const unsent = async () =>
        Number((await client.query<{ n: string }>("select count(*) as n from outbox where state <> 'sent'")).rows[0]!.n);
      await until('every outbox row sent', async () => (await unsent()) === 0, DRAIN_BOUND_MS).catch(async (e: Error) => {
        const left = await client.query("select id, state, attempts, next_attempt_at, last_error from outbox where state <> 'sent'");
        throw new Error(`${e.message}: ${JSON.stringify(left.rows)}\n${server!.log()}`);
      });
      const drainMs = performance.now() - drainStarted;
      // late duplicates would arrive on a poll after the last record: give the worker two more polls
      await new Promise((r) => setTimeout(r, 2_500));
      const drainExitStarted = performance.now();
      const drained = await server.stop('SIGTERM');
      const drainExitMs = performance.now() - drainExitStarted;
      assert.equal(drained.code, 0, server.log());
      assert.ok(drainExitMs < EXIT_BOUND_MS, `exit took ${drainExitMs} ms`);

      const count = (s: Outcome['status']) => outcomes.filter((o) => o.status === s).length;
      const received = smtp!.received;
      const slowest = Math.max(...outcomes.map((o) => o.ms));
      t.diagnostic(
        `${outcomes.length} bookings sent (${phases.join(', ')}): 201 ${count(201)}, 500 ${count(500)}, 503 ${count(503)}, ` +
          `no connection ${count('no connection')}, aborted ${count('aborted')}; slowest ${slowest.toFixed(0)} ms; ` +
          `SIGKILL after ${killAttempts} SIGSTOP look(s); mail: ${received.length} received, ${smtp!.refusals} refused, ` +
          `outbox drained ${(drainMs / 1000).toFixed(1)} s after the last SIGTERM`,
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
      const stored = await client.query<{ n: string }>('select count(*) as n from bookings where id = any($1)', [ids]);
      assert.equal(Number(stored.rows[0]!.n), ids.length, 'every 201 is stored');

      // mail: every outbox row (of every stored booking) sent, and received exactly once
      const rows = (
        await client.query<{ id: number; booking_id: number; recipient: string; kind: string; state: string }>(
          'select id, booking_id, recipient, kind, state from outbox order by id',
        )
      ).rows;
      const bookingsStored = Number((await client.query<{ n: string }>('select count(*) as n from bookings')).rows[0]!.n);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const perMessageId = new Map<string, number>();
      const perOutboxRow = new Map<number, number>();
      const perRecipientAndBooking = new Map<string, number>();
      const perKey = new Map<string, number>();
      const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
      for (const mail of received) {
        const messageId = messageIdOf(mail);
        bump(perMessageId, messageId);
        const id = Number(/^<outbox-([0-9]+)\./.exec(messageId)?.[1]);
        const row = byId.get(id);
        assert.ok(row, `a message with no outbox row: ${messageId}`);
        assert.deepEqual(mail.envelopeTo, [row.recipient], `${messageId} went to its row's recipient`);
        bump(perOutboxRow, id);
        bump(perRecipientAndBooking, `${row.recipient} ${row.booking_id}`);
        bump(perKey, messageKey(mail));
      }
      const twice = (m: Map<unknown, number>) => [...m].filter(([, n]) => n > 1);
      t.diagnostic(
        `${bookingsStored} bookings stored, ${rows.length} outbox rows, ${received.length} messages received, ` +
          `${perMessageId.size} distinct Message-IDs`,
      );
      assert.deepEqual(twice(perMessageId), [], 'no Message-ID arrived twice');
      assert.deepEqual(twice(perRecipientAndBooking), [], 'no recipient got a booking twice');
      assert.deepEqual(twice(perKey), [], 'no (recipient, method, booking) twice');
      assert.deepEqual(
        rows.filter((r) => r.state !== 'sent'),
        [],
        'every outbox row is sent',
      );
      assert.deepEqual(
        rows.filter((r) => perOutboxRow.get(r.id) !== 1).map((r) => r.id),
        [],
        'every outbox row arrived exactly once',
      );
      assert.equal(received.length, rows.length, 'as many messages as outbox rows');
      // each 201's customer got its confirmation (the rows are written in the booking's transaction)
      const confirmed = new Set(rows.filter((r) => r.kind === 'booking_confirmation').map((r) => `${r.recipient} ${r.booking_id}`));
      const missing = outcomes.filter((o) => o.status === 201 && !confirmed.has(`${o.email} ${o.bookingId}`));
      assert.deepEqual(missing, [], "every 201's customer has a confirmation");
      assert.ok(
        [...confirmed].every((k) => perRecipientAndBooking.get(k) === 1),
        'every confirmation delivered once',
      );
    },
  );
});

/**
 * Stops serve (SIGSTOP) and looks at the outbox: returns (serve still stopped, ready for SIGKILL) once no
 * message the SMTP server has accepted is still unrecorded ('sending'), preferring a moment when nothing
 * was claimed in the last few seconds (such a claim would wait out its 2 minutes). Else continues serve
 * and looks again. Returns the number of looks.
 */
async function once<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<R>(text, values);
  } finally {
    await client.end();
  }
}

async function killWhenNoMailInFlight(server: ServeProcess, url: string, smtp: TestSmtpServer): Promise<number> {
  const pid = server.child.pid!;
  for (let look = 1; look <= 60; look += 1) {
    process.kill(pid, 'SIGSTOP');
    // a COMMIT or a DATA already on the wire lands meanwhile
    await new Promise((r) => setTimeout(r, 300));
    const now = Date.now();
    const sending = (await once<{ id: number; claimed_until: string }>(url, "select id, claimed_until from outbox where state = 'sending'"))
      .rows;
    const accepted = new Set(smtp.received.map((m) => Number(/^<outbox-([0-9]+)\./.exec(messageIdOf(m))?.[1])));
    const unrecorded = sending.filter((r) => accepted.has(r.id));
    const fresh = sending.filter((r) => Number(r.claimed_until) > now + CLAIM_MS - 5_000);
    if (unrecorded.length === 0 && (fresh.length === 0 || look > 30)) return look;
    process.kill(pid, 'SIGCONT');
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 300));
  }
  throw new Error('serve never paused with no mail between acceptance and record');
}

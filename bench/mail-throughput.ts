// `npm run bench:mail`: how fast one process's outbox worker delivers, before and after issue 15
// (pooled SMTP connections, several sends at once), on SQLite, to a real local SMTP server (smtp-server)
// that answers each message after a delay, as a real server does (BENCH_MAIL_DELAY_MS, default 30 ms).
//
// - burst: BENCH_MAIL_BOOKINGS bookings (default 100, so 200 messages) are queued, then the worker starts;
//   mails/s = messages / time until the last one arrived; queue-to-delivery p50 and max.
// - paced: bookings at BENCH_MAIL_RATE a second (default 20, the fault run's rate: 40 mails/s) for
//   BENCH_MAIL_SECONDS (default 5) while the worker runs; queue-to-delivery (booking committed -> message
//   accepted by the server) p50, p99, max.
// Each against the baseline in the same run: concurrency 1 and a new SMTP connection per message
// (`?pool=false`, the worker before issue 15). Figures are printed, not asserted.
import { SMTPServer } from 'smtp-server';
import { startOutboxWorker } from '../src/app/outbox-delivery.js';
import { listMessages } from '../src/app/outbox.js';
import { freePort } from '../test/support/processes.js';
import { localDate, mailInstallation, recentPast } from '../test/integration/mail-support.js';

const env = process.env;
const DELAY_MS = Number(env.BENCH_MAIL_DELAY_MS ?? 30);
const BOOKINGS = Number(env.BENCH_MAIL_BOOKINGS ?? 100);
const RATE = Number(env.BENCH_MAIL_RATE ?? 20);
const SECONDS = Number(env.BENCH_MAIL_SECONDS ?? 5);
const DAY = 86_400_000;

/** A local SMTP server that answers 250 after DELAY_MS and notes when each Message-ID arrived. */
async function delayingSmtp() {
  const arrived = new Map<string, number>();
  const port = await freePort();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    maxClients: 100,
    onData: (stream, _session, callback) => {
      let head = '';
      stream.on('data', (c: Buffer) => {
        if (head.length < 4000) head += c.toString('utf8');
      });
      stream.on('end', () => {
        setTimeout(() => {
          const id = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? `unknown-${arrived.size}`;
          arrived.set(id, performance.now());
          callback();
        }, DELAY_MS);
      });
    },
  });
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', () => ok()));
  return {
    arrived,
    url: (pool: boolean) => `smtp://127.0.0.1:${port}/?ignoreTLS=true${pool ? '' : '&pool=false'}`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

interface Variant {
  name: string;
  concurrency: number;
  pool: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'before: 1 at a time, new connection per message', concurrency: 1, pool: false },
  { name: 'after: MAIL_CONCURRENCY=4, pooled', concurrency: 4, pool: true },
  { name: 'after: MAIL_CONCURRENCY=8, pooled', concurrency: 8, pool: true },
];

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
const ms = (x: number) => `${Math.round(x)} ms`;

/** The Message-ID's outbox id, the key both sides share. */
const outboxId = (messageId: string) => Number(/outbox-(\d+)\./.exec(messageId)?.[1]);

async function run(variant: Variant, paced: boolean) {
  const smtp = await delayingSmtp();
  const now = recentPast();
  const inst = await mailInstallation('sqlite', now);
  const queuedAt = new Map<number, number>();
  const total = paced ? RATE * SECONDS * 2 : BOOKINGS * 2;
  let nextId = 1;
  const book = async (i: number) => {
    await inst.book(`${localDate(now + DAY)} 09:00:00`, `customer${i}@example.com`);
    const at = performance.now();
    // two rows per booking, ids in order (one process books)
    queuedAt.set(nextId++, at);
    queuedAt.set(nextId++, at);
  };
  try {
    if (!paced) for (let i = 0; i < BOOKINGS; i += 1) await book(i);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url(variant.pool),
      from: 'bench@example.com',
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      concurrency: variant.concurrency,
    });
    if (paced) {
      for (let i = 0; i < RATE * SECONDS; i += 1) {
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await book(i);
      }
    }
    while (smtp.arrived.size < total) {
      if (performance.now() - started > 120_000) throw new Error(`only ${smtp.arrived.size} of ${total} arrived`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const last = Math.max(...smtp.arrived.values());
    const cpu = process.cpuUsage(cpuBefore);
    await worker.stop();
    const unsent = (await listMessages(inst.db, { limit: 500 })).filter((m) => m.state !== 'sent').length;
    const latencies = [...smtp.arrived].map(([id, at]) => at - (paced ? queuedAt.get(outboxId(id))! : started)).sort((a, b) => a - b);
    return {
      mailsPerSecond: total / ((last - started) / 1000),
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      max: latencies[latencies.length - 1]!,
      unsent,
      total,
      cpuMsPerMail: (cpu.user + cpu.system) / 1000 / total,
    };
  } finally {
    await smtp.close();
    await inst.dispose();
  }
}

console.log(`SMTP server answers each message after ${DELAY_MS} ms; SQLite; one worker (one process)`);
console.log('CPU: of this process (worker, SQLite and the SMTP server together) per message; the ceiling is about 1000 / that per core\n');
console.log(`burst: ${BOOKINGS * 2} messages queued, then the worker starts`);
for (const variant of VARIANTS) {
  const r = await run(variant, false);
  console.log(
    `  ${variant.name.padEnd(50)} ${r.mailsPerSecond.toFixed(1).padStart(7)} mails/s   queue-to-delivery p50 ${ms(r.p50)}, max ${ms(r.max)}, CPU ${r.cpuMsPerMail.toFixed(1)} ms/mail${r.unsent ? `, ${r.unsent} NOT SENT` : ''}`,
  );
}
console.log(`\npaced: ${RATE} bookings/s (${RATE * 2} mails/s) for ${SECONDS} s while the worker runs`);
for (const variant of VARIANTS.slice(0, 2)) {
  const r = await run(variant, true);
  console.log(
    `  ${variant.name.padEnd(50)} queue-to-delivery p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(r.max)}${r.unsent ? `, ${r.unsent} NOT SENT` : ''}`,
  );
}
process.exit(0);

// What one message costs the worker, by part, in one process without a database: rendering
// (mail/templates.ts, the .ics), nodemailer's MIME build (MailComposer into one buffer), and the whole send
// through the pooled SMTP transport to a real smtp-server in another process (bench/smtp-sink.ts, answering
// at once), this code's way (nodemailer streams the parts to the socket as it encodes them) against the
// alternative of building the MIME into one buffer first and handing it over as `raw`, interleaved over
// three rounds (the JIT's warm-up and the machine's load change between phases). Run with `--cpu-prof` for
// the profile. `node --import tsx bench/mail-cost.ts [messages]`
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { renderMessage, type MessageSource } from '../src/mail/templates.js';
import MailComposer from 'nodemailer/lib/mail-composer';
import { mailOptions, outboxMessageId, smtpTransport, type OutgoingMail } from '../src/mail/smtp-transport.js';
import type { SinkReport } from './smtp-sink.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const N = Number(process.argv[2] ?? 3000);

const source = (i: number): MessageSource => ({
  kind: i % 2 === 0 ? 'booking_confirmation' : 'booking_notification',
  installation: { name: 'Praxis Dr. Müller', timezone: 'Europe/Berlin', notifyEmail: 'desk@example.com' },
  contact: { phone: '+49 30 1234567', address: 'Hauptstraße 1, 10115 Berlin', website: 'https://praxis.example.com' },
  booking: {
    detailsId: `bk_${i.toString(36).padStart(10, '0')}`,
    start: Date.UTC(2026, 5, 2, 7) + i * 900_000,
    end: Date.UTC(2026, 5, 2, 7, 30) + i * 900_000,
    createdAt: Date.UTC(2026, 5, 1),
    cancelledAt: null,
    answers: { first_name: 'Jürgen', last_name: `Schäfer ${i}`, email: `kunde${i}@example.com`, notes: 'Bitte zurückrufen.' },
  },
  manageUrl: `https://booking.example.com/manage/${i}`,
  scheduleName: 'Sprechstunde',
  reason: { name: 'Erstgespräch', durationMinutes: 30 },
  form: [
    { name: 'first_name', label: 'Vorname' },
    { name: 'last_name', label: 'Nachname' },
    { name: 'email', label: 'E-Mail' },
    { name: 'notes', label: 'Anmerkungen' },
  ],
  customer: { firstName: 'Jürgen', lastName: `Schäfer ${i}`, email: `kunde${i}@example.com` },
});

const mail = (i: number) => {
  const s = source(i);
  return {
    from: 'bench@example.com',
    to: `kunde${i}@example.com`,
    message: renderMessage(s),
    messageId: outboxMessageId(i, s.booking.detailsId, 'bench@example.com'),
  };
};

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function phase(name: string, work: () => Promise<void> | void): Promise<void> {
  const before = cpu();
  const t = performance.now();
  await work();
  console.log(`${name}: ${((cpu() - before) / N).toFixed(3)} ms CPU per message (${((performance.now() - t) / N).toFixed(3)} ms wall)`);
}

for (let i = 0; i < 300; i++) renderMessage(source(i)); // warm-up
await phase('render (templates + .ics)', () => {
  for (let i = 0; i < N; i++) renderMessage(source(i));
});
/** The whole message MIME-encoded into one buffer (nodemailer's MailComposer), as `raw` would take it. */
const buildMessage = (m: OutgoingMail) =>
  new Promise<Buffer>((resolve, reject) =>
    new MailComposer(mailOptions(m)).compile().build((error, message) => (error ? reject(error) : resolve(message))),
  );
let bytes = 0;
await phase('render + MIME build into one buffer (buildMessage)', async () => {
  for (let i = 0; i < N; i++) bytes += (await buildMessage(mail(i))).length;
});
console.log(`  ${(bytes / N).toFixed(0)} bytes per message`);

const sink = fork(join(ROOT, 'bench/smtp-sink.ts'), ['0'], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const first = await new Promise<SinkReport>((resolve) => sink.once('message', resolve));
if (first.type !== 'listening') throw new Error('sink did not start');
const url = `smtp://127.0.0.1:${first.port}/?ignoreTLS=true`;
const lanes = (send: (i: number) => Promise<unknown>) => async () => {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < N) await send(next++);
    }),
  );
};
// this code's transport (nodemailer's pooled SMTP: the parts streamed to the socket as they are encoded),
// and the alternative of building the MIME into one buffer first and handing it over as `raw`
const transport = smtpTransport(url, 60_000, 16);
const signal = new AbortController().signal;
const raw = nodemailer.createTransport({ url, pool: true, maxConnections: 16 });
const sendRaw = async (i: number) => {
  const m = mail(i);
  await raw.sendMail({ raw: await buildMessage(m), envelope: { from: m.from, to: [m.to] } });
};
// interleaved, three rounds: the machine's load and the JIT's warm-up change between phases
for (let round = 1; round <= 3; round++) {
  await phase(
    `round ${round}: render + MIME build + SMTP, this code (nodemailer streams the parts; pooled, 16 at once)`,
    lanes((i) => transport.send(mail(i), signal)),
  );
  await phase(`round ${round}: render + MIME build into one buffer + SMTP of it as raw (pooled, 16 at once)`, lanes(sendRaw));
}
raw.close();
transport.close();
sink.disconnect();

// A real SMTP server on loopback (smtp-server) that records what it accepts, can refuse for a while
// (4xx or 5xx) or be down, plus a small MIME reader and an RFC 5545 unfolding parser to check what arrived.
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Db, DialectName } from '../../src/db/connect.js';
import { setup } from '../../src/app/installation.js';
import { importSchedules } from '../../src/app/schedules.js';
import { createBooking } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { migratedDatabase } from '../support/databases.js';
import { ALL_WEEK } from '../support/installation.js';
import { freePort } from '../support/processes.js';

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: string;
}

export type SmtpMode = 'accept' | 'tempfail' | 'permfail';

export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  mode: SmtpMode = 'accept';
  /** refusals answered so far (4xx or 5xx) */
  refusals = 0;
  /** the messages refused, as they arrived */
  readonly refused: ReceivedMail[] = [];
  /**
   * Runs when a message has arrived in full, before the server answers 250 (the test injects a fault
   * there: the message is accepted the moment the hook resolves).
   */
  beforeAccept: ((mail: ReceivedMail) => Promise<void>) | null = null;
  /** how long down() lets open connections finish before answering them 421 and closing; unset: smtp-server's 30 s */
  closeTimeoutMs: number | undefined = undefined;
  private server: SMTPServer | null = null;

  private constructor(
    readonly port: number,
    /** when set, the server requires AUTH (PLAIN or LOGIN, over plain text: loopback only) with these */
    readonly credentials: { user: string; pass: string } | null,
  ) {}

  static async start(options: { credentials?: { user: string; pass: string } } = {}): Promise<TestSmtpServer> {
    const smtp = new TestSmtpServer(await freePort(), options.credentials ?? null);
    await smtp.up();
    return smtp;
  }

  /** ?ignoreTLS=true: smtp-server's built-in STARTTLS certificate has expired (notes/dependencies.md) */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}/?ignoreTLS=true`;
  }

  async up(): Promise<void> {
    const options: SMTPServerOptions = {
      disabledCommands: this.credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      ...(this.credentials
        ? {
            authOptional: false,
            allowInsecureAuth: true,
            onAuth: (auth, _session, callback) => {
              const good = auth.username === this.credentials!.user && auth.password === this.credentials!.pass;
              if (good) callback(null, { user: auth.username });
              else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
            },
          }
        : {}),
      logger: false,
      ...(this.closeTimeoutMs === undefined ? {} : { closeTimeout: this.closeTimeoutMs }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const mail = {
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          };
          if (this.mode !== 'accept') {
            this.refusals += 1;
            this.refused.push(mail);
            const error = Object.assign(new Error(this.mode === 'tempfail' ? 'try again later' : 'refused for now'), {
              responseCode: this.mode === 'tempfail' ? 451 : 554,
            });
            callback(error);
            return;
          }
          const hook = this.beforeAccept ? this.beforeAccept(mail) : Promise.resolve();
          void hook.then(
            () => {
              this.received.push(mail);
              callback();
            },
            (error: unknown) => callback(error as Error),
          );
        });
      },
    };
    const server = new SMTPServer(options);
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(this.port, '127.0.0.1', () => ok());
    });
    server.on('error', () => {});
    this.server = server;
  }

  /** Down: the port refuses connections until up() again. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((ok) => server.close(() => ok()));
  }

  /** Waits (polling, no timing assertion) until `count` messages arrived, or fails after `limitMs`. */
  async waitFor(count: number, limitMs = 30_000): Promise<ReceivedMail[]> {
    const until = Date.now() + limitMs;
    while (this.received.length < count) {
      if (Date.now() > until) throw new Error(`expected ${count} messages, got ${this.received.length}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.received;
  }
}

export interface MimePart {
  headers: Map<string, string>;
  /** decoded body of a leaf part */
  body: string;
  parts: MimePart[];
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  // unfold continuation lines, then one header per line
  for (const line of block.replace(/\r\n([ \t])/g, '$1').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable': {
      const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => `%${h}`);
      return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
    }
    default:
      return body;
  }
}

export function parseMime(raw: string): MimePart {
  const split = raw.indexOf('\r\n\r\n');
  const headers = parseHeaders(raw.slice(0, split));
  const rest = raw.slice(split + 4);
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const sections = rest.split(`--${boundary}`).slice(1);
    const parts = sections.filter((s) => !s.startsWith('--')).map((s) => parseMime(s.replace(/^\r\n/, '').replace(/\r\n$/, '')));
    return { headers, body: '', parts };
  }
  return { headers, body: decodeBody(rest, headers.get('content-transfer-encoding')), parts: [] };
}

export function leafParts(part: MimePart): MimePart[] {
  return part.parts.length ? part.parts.flatMap(leafParts) : [part];
}

/** The leaf whose content type starts with `type` (e.g. 'text/plain', 'text/calendar'). */
export function partOf(raw: string, type: string): MimePart {
  const found = leafParts(parseMime(raw)).find((p) => (p.headers.get('content-type') ?? '').toLowerCase().startsWith(type));
  if (!found) throw new Error(`no ${type} part`);
  return found;
}

/** RFC 5545: unfold (CRLF + one space or tab), then NAME;PARAMS:VALUE per line, with TEXT unescaped. */
export function parseIcs(text: string): {
  lines: { name: string; params: string; value: string }[];
  get(name: string): string | undefined;
} {
  if (!text.endsWith('\r\n')) throw new Error('an iCalendar object ends with CRLF');
  const lines = text
    .replace(/\r\n[ \t]/g, '')
    .split('\r\n')
    .filter((l) => l !== '')
    .map((line) => {
      // the value starts at the first colon outside a quoted parameter value
      let quoted = false;
      let colon = -1;
      for (let i = 0; i < line.length; i += 1) {
        if (line[i] === '"') quoted = !quoted;
        else if (line[i] === ':' && !quoted) {
          colon = i;
          break;
        }
      }
      if (colon < 0) throw new Error(`not a content line: ${line}`);
      const head = line.slice(0, colon);
      const semi = head.indexOf(';');
      return {
        name: (semi < 0 ? head : head.slice(0, semi)).toUpperCase(),
        params: semi < 0 ? '' : head.slice(semi + 1),
        value: line.slice(colon + 1).replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c)),
      };
    });
  return { lines, get: (name) => lines.find((l) => l.name === name)?.value };
}

/** Polls `check` until it returns true, or fails with `what` after `limitMs` (a bound, not a timing assertion). */
export async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What identifies one message: its recipient, the calendar METHOD and the booking's UID. */
export function messageKey(mail: ReceivedMail): string {
  const ics = parseIcs(partOf(mail.raw, 'text/calendar').body);
  return `${mail.envelopeTo.join(',')} ${ics.get('METHOD')} ${ics.get('UID')}`;
}

/** The Message-ID header of a received message. */
export function messageIdOf(mail: ReceivedMail): string {
  const id = parseMime(mail.raw).headers.get('message-id');
  if (!id) throw new Error('no Message-ID header');
  return id;
}

/** A migrated database given by the caller (e.g. on a PostgreSQL of the test's own). */
export interface OwnDatabase {
  db: Db;
  url: string;
  dispose(): Promise<void>;
}

/**
 * An installation on a fresh database that child processes can open too (its URL is exposed), with
 * bookings made through the booking use-case at a fixed `now`. `own`: on that database instead.
 */
export async function mailInstallation(dialect: DialectName, now: number, own?: OwnDatabase) {
  const { db, target, dispose } = own
    ? { db: own.db, target: { url: own.url }, dispose: () => own.dispose() }
    : await migratedDatabase(dialect);
  await setup(
    db,
    {
      timezone: 'Europe/Berlin',
      adminEmail: 'admin@example.com',
      adminPassword: 'correct horse battery',
      name: 'Test practice',
      notifyEmail: 'desk@example.com',
    },
    now,
  );
  const [schedule] = (
    await importSchedules(
      db,
      {
        schedules: [
          {
            name: 'Desk',
            slot_interval_minutes: 30,
            horizon_days: 7,
            capacity: 100,
            weekly_hours: ALL_WEEK([['09:00', '17:00']]),
            reasons: [{ name: 'Talk', duration_minutes: 30 }],
          },
        ],
      },
      now,
    )
  ).schedules;
  const snapshots = new SnapshotCache(db);
  const book = async (slot: string, email: string) =>
    createBooking(
      db,
      await snapshots.current(),
      {
        scheduleId: schedule!.id,
        reasonId: schedule!.reasons[0]!.id,
        slot,
        submission: { email },
        source: 'api',
      },
      now,
    );
  return { db, url: target.url, book, dispose };
}

/**
 * An hour before the real clock: rows queued then are due at once for a real-clock worker, and the next
 * day's 09:00 (local) is still ahead of the real clock, so the messages are current (a worker skips a
 * confirmation of an appointment that has begun: docs/mail.md "Stale messages").
 */
export function recentPast(): number {
  return Date.now() - 3_600_000;
}

export const localDate = (instant: number) => new Date(instant).toISOString().slice(0, 10);

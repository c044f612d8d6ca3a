// bin/booking: parse the arguments, call one use-case, print its result (docs/decisions.md §6).
// Bad input: one line on stderr, exit code 1 (2 for a usage error), nothing stored.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { connect, type Db, UNBOUNDED_WORK } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { InvalidInput } from '../core/errors.js';
import { setup, setApiEnabled, generateToken, setOperatorSetting } from '../app/installation.js';
import { importSchedules } from '../app/schedules.js';
import { demo, DEMO_ADMIN_EMAIL } from '../app/demo.js';
import { resetAdminPassword } from '../app/admin-auth.js';
import { invitationPath, inviteUser, listUsers, parseRole, parseScheduleIds } from '../app/admin-users.js';
import { CLI_ACTOR } from '../app/audit.js';
import { addWebhookEndpoint, listWebhookEndpoints, removeWebhookEndpoint, setWebhookEnabled } from '../app/webhooks.js';
import { parseWebhookEvents } from '../core/webhooks.js';

const USAGE = `usage: booking <command>
  serve [--host H] [--port P]
  setup --timezone TZ --admin-email E --admin-password P [--name N] [--notify-email E]
  import FILE
  api enable|disable
  token generate
  set KEY VALUE
  admin reset-password [--email E] [--password P]
  admin invite --email E [--role staff|administrator] [--schedules 1,2]
  admin list
  webhook add URL [--events booking.created,booking.cancelled,booking.rescheduled,booking.restored]
  webhook list
  webhook remove|enable|disable ID
  demo`;

class UsageError extends Error {}

async function withDb<T>(config: Config, work: (db: Db) => Promise<T>): Promise<T> {
  // an operator's command: no client waits for it, so no statement bound and the long SQLite busy wait
  const db = connect(config.databaseUrl, { poolMax: 2, preparedStatements: config.databasePreparedStatements, ...UNBOUNDED_WORK });
  try {
    await migrate(db);
    return await work(db);
  } finally {
    await db.close();
  }
}

/** The demo's zone: DEMO_TIMEZONE, else Europe/Berlin (a zone with DST, so the demo shows it). */
const demoTimezone = () => process.env.DEMO_TIMEZONE || 'Europe/Berlin';

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  const now = Date.now();
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { host: { type: 'string' }, port: { type: 'string' } } });
      const env = { ...process.env, ...(values.host ? { HOST: values.host } : {}), ...(values.port ? { PORT: values.port } : {}) };
      // loaded only here: the HTTP stack is most of the start-up time of the other commands
      const { serveForever } = await import('../server.js');
      await serveForever(loadConfig(env));
      return;
    }
    case 'setup': {
      const { values } = parseArgs({
        args: rest,
        options: {
          timezone: { type: 'string' },
          'admin-email': { type: 'string' },
          'admin-password': { type: 'string' },
          name: { type: 'string' },
          'notify-email': { type: 'string' },
        },
      });
      for (const required of ['timezone', 'admin-email', 'admin-password'] as const) {
        if (values[required] === undefined) throw new UsageError(`setup needs --${required}`);
      }
      await withDb(config, (db) =>
        setup(
          db,
          {
            timezone: values.timezone!,
            adminEmail: values['admin-email']!,
            adminPassword: values['admin-password']!,
            name: values.name,
            notifyEmail: values['notify-email'],
          },
          now,
        ),
      );
      return;
    }
    case 'import': {
      if (rest.length !== 1) throw new UsageError('import needs one FILE');
      let document: unknown;
      try {
        document = JSON.parse(readFileSync(rest[0]!, 'utf8'));
      } catch (error) {
        throw new InvalidInput(`cannot read ${rest[0]}: ${(error as Error).message.split('\n')[0]}`);
      }
      const result = await withDb(config, (db) => importSchedules(db, document, now));
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    case 'api': {
      if (rest.length !== 1 || (rest[0] !== 'enable' && rest[0] !== 'disable')) throw new UsageError('api needs enable or disable');
      await withDb(config, (db) => setApiEnabled(db, rest[0] === 'enable'));
      return;
    }
    case 'token': {
      if (rest.length !== 1 || rest[0] !== 'generate') throw new UsageError('token needs generate');
      const token = await withDb(config, (db) => generateToken(db));
      process.stdout.write(`${token}\n`);
      return;
    }
    case 'set': {
      if (rest.length !== 2) throw new UsageError('set needs KEY VALUE');
      await withDb(config, (db) => setOperatorSetting(db, rest[0]!, rest[1]!));
      return;
    }
    case 'admin':
      return adminCommand(config, rest, now);
    case 'webhook':
      return webhookCommand(config, rest, now);
    case 'demo': {
      if (rest.length !== 0) throw new UsageError('demo takes no arguments');
      const result = await withDb(config, (db) => demo(db, demoTimezone(), now));
      const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
      const lines = [
        `Demo installation ready (${config.databaseUrl}).`,
        `Base URL:  ${base}/api`,
        `API token: ${result.token}`,
        result.adminPassword
          ? `Admin:     ${base}/admin  ${DEMO_ADMIN_EMAIL} / ${result.adminPassword}`
          : `Admin:     ${base}/admin  (existing installation: its admin account is unchanged)`,
        '',
        'Start the server with `bin/booking serve`, then try:',
        `  curl -H 'Authorization: Bearer ${result.token}' ${base}/api/schedules`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      if (command === undefined) process.exitCode = 2;
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

async function adminCommand(config: Config, args: string[], now: number): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'reset-password': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { email: { type: 'string' }, password: { type: 'string' } },
        allowPositionals: true,
      });
      if (positionals.length) throw new UsageError(`admin reset-password takes no argument ${JSON.stringify(positionals[0])}`);
      // without --password: a generated one, printed once (an argument shows in `ps` and the shell history)
      const password = values.password ?? randomBytes(12).toString('base64url');
      const result = await withDb(config, (db) => resetAdminPassword(db, values.email, password));
      const ended = `${result.sessionsEnded} session${result.sessionsEnded === 1 ? '' : 's'} ended, sign-in lock cleared`;
      process.stdout.write(
        values.password === undefined
          ? `New password for ${result.email}: ${password}\n(${ended})\n`
          : `Password of ${result.email} changed (${ended}).\n`,
      );
      return;
    }
    case 'invite': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { email: { type: 'string' }, role: { type: 'string' }, schedules: { type: 'string' } },
        allowPositionals: true,
      });
      if (positionals.length) throw new UsageError(`admin invite takes no argument ${JSON.stringify(positionals[0])}`);
      if (values.email === undefined) throw new UsageError('admin invite needs --email');
      const role = parseRole(values.role ?? 'staff');
      if (!role) throw new UsageError(`--role must be staff or administrator, got ${JSON.stringify(values.role)}`);
      const scheduleIds = parseScheduleIds(values.schedules ?? '');
      const invitation = await withDb(config, (db) => inviteUser(db, { email: values.email!, role, scheduleIds }, CLI_ACTOR, now));
      // PUBLIC_URL when set; else the path, to be opened on the address the admin area is reached at
      const link = config.publicUrl ? `${config.publicUrl.replace(/\/+$/, '')}${invitation.path}` : invitation.path;
      process.stdout.write(
        `Invitation for ${invitation.email} (${role}), valid until ${new Date(invitation.expiresAt).toISOString()}, usable once:\n${link}\n` +
          (config.publicUrl
            ? ''
            : '(PUBLIC_URL is not set: open this path on the address of the admin area, e.g. https://booking.example.com' +
              invitationPath('…') +
              ')\n'),
      );
      return;
    }
    case 'list': {
      if (rest.length !== 0) throw new UsageError('admin list takes no arguments');
      const users = await withDb(config, (db) => listUsers(db));
      // one user a line, tab-separated: id, e-mail, role, schedule ids, name, last sign-in
      const lines = users.map((u) =>
        [
          u.id,
          u.email,
          u.role,
          u.role === 'staff' ? u.scheduleIds.join(',') : '*',
          u.name,
          u.lastSignInAt === null ? 'never' : new Date(u.lastSignInAt).toISOString(),
        ].join('\t'),
      );
      process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
      return;
    }
    default:
      throw new UsageError('admin needs reset-password, invite or list');
  }
}

/** An endpoint id as the operator types it: a positive decimal integer. */
function endpointId(text: string | undefined, sub: string): number {
  if (text === undefined || !/^[1-9][0-9]{0,9}$/.test(text)) throw new UsageError(`webhook ${sub} needs an endpoint ID (see webhook list)`);
  return Number(text);
}

async function webhookCommand(config: Config, args: string[], now: number): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add': {
      const { values, positionals } = parseArgs({ args: rest, options: { events: { type: 'string' } }, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('webhook add needs one URL');
      // checked before the database is opened: bad input stores nothing
      const events = parseWebhookEvents(values.events);
      const endpoint = await withDb(config, (db) => addWebhookEndpoint(db, { url: positionals[0]!, events }, now, true));
      process.stdout.write(
        `Webhook endpoint ${endpoint.id}: ${endpoint.url}\nEvents: ${endpoint.events.join(', ')}\n` +
          `Secret: ${endpoint.secret}\n(shown only this once: configure it in the receiver now)\n`,
      );
      return;
    }
    case 'list': {
      if (rest.length !== 0) throw new UsageError('webhook list takes no arguments');
      const endpoints = await withDb(config, (db) => listWebhookEndpoints(db));
      // one endpoint a line, tab-separated: id, enabled/disabled, URL, events. Never the secret.
      const lines = endpoints.map((e) => [e.id, e.enabled ? 'enabled' : 'disabled', e.url, e.events.join(',')].join('\t'));
      process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
      return;
    }
    case 'remove':
    case 'enable':
    case 'disable': {
      if (rest.length !== 1) throw new UsageError(`webhook ${sub} needs one endpoint ID`);
      const id = endpointId(rest[0], sub);
      await withDb(config, (db) => (sub === 'remove' ? removeWebhookEndpoint(db, id) : setWebhookEnabled(db, id, sub === 'enable')));
      process.stdout.write(`Webhook endpoint ${id} ${sub === 'remove' ? 'removed' : `${sub}d`}.\n`);
      return;
    }
    default:
      throw new UsageError('webhook needs add, list, remove, enable or disable');
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`booking: ${message.split('\n')[0]}\n`);
  if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`);
  process.exitCode = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
});

// Admin sign-in, sessions and password changes (docs/security.md, "The admin area").
//
// Sessions live in the database (table admin_sessions), so that every instance sees the same ones and
// sign-out, a password change and `booking admin reset-password` end them at once everywhere. The cookie
// carries a random session id; the table keeps only its SHA-256. A session ends after SESSION_DAYS in any
// case and after IDLE_MS without a request.
//
// The signing secret (CSRF tokens of a session, the signed pre-session token of the setup and sign-in
// forms) lives in the settings table (created on first use), so all instances share it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Db } from '../db/connect.js';
import { findAdminByEmail, findAdminById, findOrCreateSetting, listAdmins, setAdminPassword } from '../db/repos/installation.repository.js';
import {
  clearSignInFailures,
  clearSignInFailuresByPrefix,
  deleteSignInRows,
  expireSignInFailures,
  recentSignInFailures,
  recordSignInAttempt,
} from '../db/repos/sign-in-failure.repository.js';
import {
  deleteAdminSession,
  deleteAdminSessionsOf,
  deleteStaleAdminSessions,
  findAdminSession,
  insertAdminSession,
  touchAdminSession,
} from '../db/repos/admin-session.repository.js';
import { InvalidInput } from '../core/errors.js';
import type { AdminRole } from '../db/schema.js';
import { setLastSignIn } from '../db/repos/admin-user.repository.js';
import { recordAudit } from './audit.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { MIN_PASSWORD_LENGTH } from './installation.js';

const SECRET_KEY = 'admin.session_secret';
export const SESSION_DAYS = 7;
const SESSION_MS = SESSION_DAYS * 86_400_000;
/** a session unused this long has ended */
export const IDLE_MS = 8 * 3_600_000;
/** last_seen_at is written at most this often per session (one write a minute at most, not one per request) */
const TOUCH_EVERY_MS = 60_000;

/** The installation's session secret; the first caller anywhere creates it, every other one reads the same. */
export async function sessionSecret(db: Db): Promise<Buffer> {
  const stored = await findOrCreateSetting(db.kysely, SECRET_KEY, randomBytes(32).toString('base64url'));
  return Buffer.from(stored as string, 'base64url');
}

export interface Session {
  adminId: number;
  email: string;
  /** '' until the user gave one */
  name: string;
  role: AdminRole;
  /** the schedules a staff member works on (an administrator's are ignored: see visibleSchedules) */
  scheduleIds: readonly number[];
  /** random per sign-in, the cookie's value; the CSRF token is derived from it */
  sessionId: string;
  expiresAt: number;
}

const sign = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest('base64url');
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The key of a session's row (the SHA-256 of its id, which is never stored). */
export const sessionKey = (session: Session) => sha256(session.sessionId);

const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex');

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** 32 random bytes, base64url */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A new session of this admin; returns the cookie value (the session id: shown to this browser only, stored hashed). */
export async function createSession(db: Db, adminId: number, now: number, signedInAs?: string): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await db.write(async (trx) => {
    // keeps the table to the sessions that can still be used
    await deleteStaleAdminSessions(trx, now, now - IDLE_MS);
    await insertAdminSession(trx, sha256(sessionId), adminId, now, now + SESSION_MS);
    // a sign-in proper (not the new session of a password change): the Users page's "last sign-in", the trail
    if (signedInAs !== undefined) {
      await setLastSignIn(trx, adminId, now);
      await recordAudit(trx, { kind: 'admin', adminId, label: signedInAs }, 'user.signed_in', null, '', now);
    }
  });
  return sessionId;
}

/** The session a cookie value stands for, or null (unknown, signed out, expired, idle too long, admin gone). */
export async function readSession(db: Db, value: string | undefined, now: number): Promise<Session | null> {
  if (!value || !SESSION_ID.test(value)) return null;
  const idHash = sha256(value);
  const row = await findAdminSession(db.kysely, idHash);
  if (!row) return null;
  if (!(row.expires_at > now) || !(row.last_seen_at + IDLE_MS > now)) {
    await deleteAdminSession(db.kysely, idHash);
    return null;
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) await touchAdminSession(db.kysely, idHash, now);
  return {
    adminId: row.admin_id,
    email: row.email,
    name: row.name,
    role: row.role,
    scheduleIds: schedulesOf(row.schedule_ids),
    sessionId: value,
    expiresAt: row.expires_at,
  };
}

function schedulesOf(json: string): number[] {
  const ids = JSON.parse(json) as unknown;
  return Array.isArray(ids) ? ids.filter((v): v is number => Number.isInteger(v)) : [];
}

/** Sign-out: the session ends on the server, whatever the browser keeps. */
export async function endSession(db: Db, value: string | undefined): Promise<void> {
  if (value && SESSION_ID.test(value)) await deleteAdminSession(db.kysely, sha256(value));
}

export const csrfToken = (secret: Buffer, session: Session) => sign(secret, `csrf:${session.sessionId}`);
export const checkCsrf = (secret: Buffer, session: Session, token: unknown) =>
  typeof token === 'string' && safeEqual(token, csrfToken(secret, session));

/**
 * The CSRF token of the forms shown before there is a session (setup, sign-in): a random nonce and the
 * HMAC of it under the session secret. Kept in a cookie and repeated in the form; accepted only when the
 * two match AND the signature verifies, so a value the client made up (or one planted by a sibling
 * subdomain's cookie) is not a token.
 */
export const newPreToken = (secret: Buffer) => {
  const nonce = randomBytes(18).toString('base64url');
  return `${nonce}.${sign(secret, `pre:${nonce}`)}`;
};

export function validPreToken(secret: Buffer, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const [nonce, signature, ...rest] = value.split('.');
  return rest.length === 0 && !!nonce && !!signature && safeEqual(signature, sign(secret, `pre:${nonce}`));
}

/**
 * What a sign-in (or a current-password check) is counted under, hashed (the password never is):
 * the account (the lower-cased e-mail), the client address, and the pair of both. The pair's key starts
 * with the account's part, so that the reset command can clear every pair of one account.
 */
export function throttleKeys(email: string, clientIp: string): string[] {
  const account = email.trim().toLowerCase();
  const client = clientNetwork(clientIp);
  return [`email:${sha256(account)}`, `ip:${sha256(client)}`, `${pairPrefix(account)}${sha256hex(client).slice(0, 24)}`];
}

/**
 * The unit an address is counted as: an IPv4 address itself, an IPv6 address by its /64 (one subscriber
 * is handed a whole /64, so counting single IPv6 addresses would give one attacker endless fresh ones).
 */
export function clientNetwork(clientIp: string): string {
  if (!isIPv6(clientIp)) return clientIp;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(clientIp);
  if (mapped) return mapped[1]!;
  // expand "::" so the first four groups are the /64
  const [head = '', tail = ''] = clientIp.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = clientIp.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = clientIp.includes('::')
    ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

const pairPrefix = (account: string) => `pair:${sha256hex(account).slice(0, 24)}.`;

/** One attempt as the throttle sees it: its wait (0: go ahead) and the rows that count it. */
export interface ThrottledAttempt {
  waitMs: number;
  rows: number[];
}

/** The limits, each over the same sliding window (docs/security.md, "The admin area"). */
export interface ThrottleLimits {
  /** failures of one account from one address */
  perPair: number;
  /** failures from one address, whatever the account (an office behind one NAT shares it) */
  perAddress: number;
  /** failures of one account from all addresses together: the bound on a distributed guesser */
  perAccount: number;
  windowMs: number;
}

export const DEFAULT_LIMITS: ThrottleLimits = { perPair: 5, perAddress: 20, perAccount: 100, windowMs: 15 * 60_000 };

/**
 * Failed sign-ins counted per (account, address), per address and per account in a sliding window;
 * over any limit, the attempt is refused (even with the right password) until the window passes. An
 * attacker at one address therefore locks only that address out (5 failures for the account, 20 in all),
 * not the owner at theirs; only failures from 20 or more addresses can reach the per-account bound.
 *
 * The count lives in the database (table sign_in_failures), so every instance on it sees the same
 * failures and N instances do not give an attacker N times the attempts. An attempt is counted as a
 * failure before its password is checked and uncounted when it succeeds or is refused: attempts running
 * at the same time, here or in another instance, then see each other, so a burst sent in parallel gets no
 * more than the limit past the check.
 */
export class SignInThrottle {
  readonly limits: ThrottleLimits;

  constructor(
    private readonly db: Db,
    limits: Partial<ThrottleLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  private limitOf(key: string): number {
    if (key.startsWith('ip:')) return this.limits.perAddress;
    if (key.startsWith('email:')) return this.limits.perAccount;
    return this.limits.perPair;
  }

  /** Counts the attempt and says how long it must wait because of the failures before it (0: none). */
  async begin(keys: readonly string[], now: number): Promise<ThrottledAttempt> {
    const q = this.db.kysely;
    const { windowMs } = this.limits;
    // bounded table: what lies outside the window counts for nothing any more
    await expireSignInFailures(q, now - windowMs);
    const rows = await recordSignInAttempt(q, keys, now);
    let waitMs = 0;
    for (const key of keys) {
      const limit = this.limitOf(key);
      const times = await recentSignInFailures(q, key, now - windowMs, limit, rows);
      // the oldest of the last `limit` failures leaves the window first
      if (times.length >= limit) waitMs = Math.max(waitMs, times[limit - 1]! + windowMs - now, 1);
    }
    return { waitMs, rows };
  }

  /** A refused attempt is no failure: it must not prolong the lock-out. */
  async refused(attempt: ThrottledAttempt): Promise<void> {
    await deleteSignInRows(this.db.kysely, attempt.rows);
  }

  /**
   * The right password: this attempt is no failure, and the counts of this address and of this
   * (account, address) start again. The account's own count is kept: the owner signing in must not give
   * a guesser elsewhere a fresh allowance.
   */
  async succeeded(attempt: ThrottledAttempt, keys: readonly string[]): Promise<void> {
    await deleteSignInRows(this.db.kysely, attempt.rows);
    await clearSignInFailures(
      this.db.kysely,
      keys.filter((k) => !k.startsWith('email:')),
    );
  }
}

const tooMany = (waitMs: number) => `Too many failed sign-ins. Try again in ${Math.ceil(waitMs / 60_000)} minutes.`;

export type SignInResult = { ok: true; cookie: string } | { ok: false; message: string };

export async function signIn(
  db: Db,
  throttle: SignInThrottle,
  email: string,
  password: string,
  clientIp: string,
  now: number,
): Promise<SignInResult> {
  const key = email.trim().toLowerCase();
  const keys = throttleKeys(key, clientIp);
  const attempt = await throttle.begin(keys, now);
  if (attempt.waitMs > 0) {
    await throttle.refused(attempt);
    return { ok: false, message: tooMany(attempt.waitMs) };
  }
  const admin = await findAdminByEmail(db.kysely, key);
  // verify against a dummy hash when the admin is unknown, so timing does not reveal which e-mails exist
  const valid = await verifyPassword(password, admin?.password_hash ?? DUMMY_HASH);
  // a failure stays counted (begin counted it already)
  if (!admin || !valid) return { ok: false, message: 'Wrong e-mail or password.' };
  await throttle.succeeded(attempt, keys);
  return { ok: true, cookie: await createSession(db, admin.id, now, admin.name || admin.email) };
}

const DUMMY_HASH = await hashPassword(randomBytes(12).toString('hex'));

/** The password page's current-password check was refused by the throttle. */
export class TooManyAttempts extends Error {
  constructor(readonly waitMs: number) {
    super(`Too many wrong passwords. Try again in ${Math.ceil(waitMs / 60_000)} minutes.`);
    this.name = 'TooManyAttempts';
  }
}

/**
 * Changes the password. The current password is checked under the sign-in throttle (same keys: this
 * account, this address), so a stolen session cannot guess it faster than a sign-in could. Every session
 * of the admin ends; this browser gets a new one, whose cookie value is returned.
 */
export async function changePassword(
  db: Db,
  throttle: SignInThrottle,
  session: Session,
  input: { current: string; next: string; repeat: string },
  clientIp: string,
  now: number,
): Promise<string> {
  const admin = await findAdminById(db.kysely, session.adminId);
  // the session was checked a moment ago; only a deletion in between gets here
  if (!admin) throw new Error(`admin ${session.adminId} no longer exists`);
  const keys = throttleKeys(admin.email, clientIp);
  const attempt = await throttle.begin(keys, now);
  if (attempt.waitMs > 0) {
    await throttle.refused(attempt);
    throw new TooManyAttempts(attempt.waitMs);
  }
  // a wrong current password stays counted as a failure
  if (!(await verifyPassword(input.current, admin.password_hash)))
    throw new InvalidInput('The current password is wrong.', 'current_password');
  await throttle.succeeded(attempt, keys);
  if (input.next.length < MIN_PASSWORD_LENGTH)
    throw new InvalidInput(`The new password must have at least ${MIN_PASSWORD_LENGTH} characters.`, 'new_password');
  if (input.next !== input.repeat) throw new InvalidInput('The two new passwords differ.', 'repeat_password');
  const passwordHash = await hashPassword(input.next);
  await db.write(async (trx) => {
    await setAdminPassword(trx, admin.id, passwordHash);
    await deleteAdminSessionsOf(trx, admin.id);
  });
  return createSession(db, admin.id, now);
}

export interface AdminReset {
  email: string;
  /** sessions that were ended */
  sessionsEnded: number;
}

/**
 * `booking admin reset-password`: sets the admin's password, clears the sign-in throttle of the account
 * (its own count and every (account, address) pair) and ends all its sessions. `email` may be left out
 * when there is exactly one admin.
 */
export async function resetAdminPassword(db: Db, email: string | undefined, password: string): Promise<AdminReset> {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new InvalidInput(`the admin password must have at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
  let admin: { id: number; email: string } | undefined;
  if (email === undefined) {
    const admins = await listAdmins(db.kysely);
    if (admins.length === 0) throw new InvalidInput('there is no admin account: run `booking setup` first', 'email');
    if (admins.length > 1) throw new InvalidInput('there are several admin accounts: name one with --email', 'email');
    admin = admins[0];
  } else {
    admin = await findAdminByEmail(db.kysely, email.trim().toLowerCase());
    if (!admin) throw new InvalidInput(`no admin account has the e-mail ${email.trim()}`, 'email');
  }
  const { id, email: account } = admin!;
  const passwordHash = await hashPassword(password);
  const sessionsEnded = await db.write(async (trx) => {
    await setAdminPassword(trx, id, passwordHash);
    await clearSignInFailures(trx, [throttleKeys(account, '')[0]!]);
    await clearSignInFailuresByPrefix(trx, [pairPrefix(account)]);
    return deleteAdminSessionsOf(trx, id);
  });
  return { email: account, sessionsEnded };
}

// Admin sign-in, sessions and password changes. Sessions are stateless signed cookies so that any
// instance can check them; the signing secret lives in the database (created on first use) so all
// instances share it. A session carries a fingerprint of the password hash: changing the password
// ends every other session.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { findAdminByEmail, findAdminById, findOrCreateSetting, setAdminPassword } from '../db/repos/installation.repository.js';
import {
  clearSignInFailures,
  deleteSignInRows,
  expireSignInFailures,
  recentSignInFailures,
  recordSignInAttempt,
} from '../db/repos/sign-in-failure.repository.js';
import { InvalidInput } from '../core/errors.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { MIN_PASSWORD_LENGTH } from './installation.js';

const SECRET_KEY = 'admin.session_secret';
export const SESSION_DAYS = 7;
const SESSION_MS = SESSION_DAYS * 86_400_000;

/** The installation's session secret; the first caller anywhere creates it, every other one reads the same. */
export async function sessionSecret(db: Db): Promise<Buffer> {
  const stored = await findOrCreateSetting(db.kysely, SECRET_KEY, randomBytes(32).toString('base64url'));
  return Buffer.from(stored as string, 'base64url');
}

export interface Session {
  adminId: number;
  email: string;
  /** random per sign-in; the CSRF token is derived from it */
  sessionId: string;
  expiresAt: number;
}

const sign = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest('base64url');
const fingerprint = (secret: Buffer, passwordHash: string) => sign(secret, `pw:${passwordHash}`).slice(0, 16);

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function sessionCookieValue(secret: Buffer, admin: { id: number; password_hash: string }, now: number): string {
  const body = `${admin.id}.${now + SESSION_MS}.${randomBytes(16).toString('base64url')}.${fingerprint(secret, admin.password_hash)}`;
  return `${body}.${sign(secret, body)}`;
}

/** The session a cookie value stands for, or null (forged, expired, password changed, admin gone). */
export async function readSession(db: Db, secret: Buffer, value: string | undefined, now: number): Promise<Session | null> {
  if (!value) return null;
  const parts = value.split('.');
  if (parts.length !== 5) return null;
  const [id, expires, sessionId, print, signature] = parts as [string, string, string, string, string];
  if (!safeEqual(signature, sign(secret, `${id}.${expires}.${sessionId}.${print}`))) return null;
  if (!(Number(expires) > now)) return null;
  const admin = await findAdminById(db.kysely, Number(id));
  if (!admin || !safeEqual(print, fingerprint(secret, admin.password_hash))) return null;
  return { adminId: admin.id, email: admin.email, sessionId, expiresAt: Number(expires) };
}

export const csrfToken = (secret: Buffer, session: Session) => sign(secret, `csrf:${session.sessionId}`);
export const checkCsrf = (secret: Buffer, session: Session, token: unknown) =>
  typeof token === 'string' && safeEqual(token, csrfToken(secret, session));

const hashed = (text: string) => createHash('sha256').update(text).digest('base64url');

/** What a sign-in is counted under: the e-mail and the client address, hashed (the password never is). */
export function throttleKeys(email: string, clientIp: string): string[] {
  return [`email:${hashed(email.trim().toLowerCase())}`, `ip:${hashed(clientIp)}`];
}

/** One sign-in attempt as the throttle sees it: its wait (0: go ahead) and the rows that count it. */
export interface ThrottledAttempt {
  waitMs: number;
  rows: number[];
}

/**
 * Failed sign-ins counted per e-mail and per client address in a sliding window; over the limit, sign-in
 * is refused (even with the right password) until the window passes. The count lives in the database
 * (table sign_in_failures), so every instance on it sees the same failures and N instances do not give
 * an attacker N times the attempts.
 *
 * An attempt is counted as a failure before its password is checked and uncounted when it succeeds or is
 * refused: attempts running at the same time, here or in another instance, then see each other, so a
 * burst sent in parallel gets no more than the limit past the check.
 */
export class SignInThrottle {
  /** per e-mail; an address (an office behind one NAT) gets four times as many */
  constructor(
    private readonly db: Db,
    readonly maxFailures = 5,
    readonly windowMs = 15 * 60_000,
  ) {}

  private limitOf(key: string): number {
    return key.startsWith('ip:') ? this.maxFailures * 4 : this.maxFailures;
  }

  /** Counts the attempt and says how long it must wait because of the failures before it (0: none). */
  async begin(keys: readonly string[], now: number): Promise<ThrottledAttempt> {
    const q = this.db.kysely;
    // bounded table: what lies outside the window counts for nothing any more
    await expireSignInFailures(q, now - this.windowMs);
    const rows = await recordSignInAttempt(q, keys, now);
    let waitMs = 0;
    for (const key of keys) {
      const limit = this.limitOf(key);
      const times = await recentSignInFailures(q, key, now - this.windowMs, limit, rows);
      // the oldest of the last `limit` failures leaves the window first
      if (times.length >= limit) waitMs = Math.max(waitMs, times[limit - 1]! + this.windowMs - now, 1);
    }
    return { waitMs, rows };
  }

  /** A refused attempt is no failure: it must not prolong the lock-out. */
  async refused(attempt: ThrottledAttempt): Promise<void> {
    await deleteSignInRows(this.db.kysely, attempt.rows);
  }

  /** The right password: the counts of this e-mail and address start again. */
  async succeeded(keys: readonly string[]): Promise<void> {
    await clearSignInFailures(this.db.kysely, keys);
  }
}

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
    return { ok: false, message: `Too many failed sign-ins. Try again in ${Math.ceil(attempt.waitMs / 60_000)} minutes.` };
  }
  const admin = await findAdminByEmail(db.kysely, key);
  // verify against a dummy hash when the admin is unknown, so timing does not reveal which e-mails exist
  const valid = await verifyPassword(password, admin?.password_hash ?? DUMMY_HASH);
  // a failure stays counted (begin counted it already)
  if (!admin || !valid) return { ok: false, message: 'Wrong e-mail or password.' };
  await throttle.succeeded(keys);
  return { ok: true, cookie: sessionCookieValue(await sessionSecret(db), admin, now) };
}

const DUMMY_HASH = await hashPassword(randomBytes(12).toString('hex'));

/** Changes the password; every other session ends (their fingerprint no longer matches). Returns the new cookie. */
export async function changePassword(
  db: Db,
  session: Session,
  current: string,
  next: string,
  repeat: string,
  now: number,
): Promise<string> {
  const admin = await findAdminById(db.kysely, session.adminId);
  // the session was checked a moment ago; only a deletion in between gets here
  if (!admin) throw new Error(`admin ${session.adminId} no longer exists`);
  if (!(await verifyPassword(current, admin.password_hash))) throw new InvalidInput('The current password is wrong.', 'current_password');
  if (next.length < MIN_PASSWORD_LENGTH)
    throw new InvalidInput(`The new password must have at least ${MIN_PASSWORD_LENGTH} characters.`, 'new_password');
  if (next !== repeat) throw new InvalidInput('The two new passwords differ.', 'repeat_password');
  const passwordHash = await hashPassword(next);
  await db.write((trx) => setAdminPassword(trx, admin.id, passwordHash));
  return sessionCookieValue(await sessionSecret(db), { id: admin.id, password_hash: passwordHash }, now);
}

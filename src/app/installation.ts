// Operator use-cases on the installation as a whole: setup, the API switch, the token, settings.
// The CLI and the admin area both call these.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { bumpConfigVersion, loadSettings, saveSetting, upsertAdmin } from '../db/repos/installation.repository.js';
import { Conflict, InvalidInput } from '../core/errors.js';
import { parseEmail, parseOperatorSetting, parseTimezone, SETTING_KEYS, type SettingKey } from '../core/settings.js';
import { hashPassword } from './passwords.js';
import { hashToken, newToken } from './api-token.js';
import { holdUnshownToken, takeUnshownTokenRow } from '../db/repos/admin-session.repository.js';
import type { OnCreated } from './form-tokens.js';

export interface SetupInput {
  timezone: string;
  adminEmail: string;
  adminPassword: string;
  name?: string | undefined;
  notifyEmail?: string | undefined;
}

export const MIN_PASSWORD_LENGTH = 8;

export const ALREADY_SET_UP =
  'the installation is already set up; nothing was changed (change the admin password with `booking admin reset-password`, settings with `booking set`)';

/**
 * Finishes the installation (docs/decisions.md §1): admin account, zone, name, notification address. Once: on a
 * finished installation it throws Conflict and changes nothing (a second run used to replace the admin
 * password and the notification address without a word).
 */
export async function setup(db: Db, input: SetupInput, now: number): Promise<void> {
  const timezone = parseTimezone(input.timezone);
  const adminEmail = parseEmail(input.adminEmail, 'admin_email');
  if (input.adminPassword.length < MIN_PASSWORD_LENGTH) {
    throw new InvalidInput(`the admin password must have at least ${MIN_PASSWORD_LENGTH} characters`, 'admin_password');
  }
  const notifyEmail = input.notifyEmail === undefined ? adminEmail : parseEmail(input.notifyEmail, 'notify_email');
  const name = input.name?.trim() || undefined;
  if (name !== undefined && name.length > 200) throw new InvalidInput('the name must have at most 200 characters', 'name');
  const passwordHash = await hashPassword(input.adminPassword);
  await db.write(async (trx) => {
    // the version bump first: on PostgreSQL its row lock makes two setups running at once take turns, and
    // the second one then reads the first one's settings (on SQLite the write transaction already does)
    await bumpConfigVersion(trx);
    if ((await loadSettings(trx)).configured) throw new Conflict(ALREADY_SET_UP);
    await upsertAdmin(trx, adminEmail.toLowerCase(), passwordHash, now);
    await saveSetting(trx, 'installation.timezone', timezone);
    await saveSetting(trx, 'installation.notify_email', notifyEmail);
    if (name !== undefined) await saveSetting(trx, 'installation.name', name);
    await saveSetting(trx, 'installation.configured', true);
  });
}

export async function isConfigured(db: Db): Promise<boolean> {
  return (await loadSettings(db.kysely)).configured;
}

/** Saves settings in one transaction with one config-version bump, so every process sees them together on its next request. */
export async function saveSettings(db: Db, values: Partial<Record<SettingKey, unknown>>): Promise<void> {
  await db.write(async (trx) => {
    for (const [key, value] of Object.entries(values)) await saveSetting(trx, key as SettingKey, value);
    await bumpConfigVersion(trx);
  });
}

export async function setApiEnabled(db: Db, enabled: boolean): Promise<void> {
  await saveSettings(db, { 'api.enabled': enabled });
}

/** A new token; the old one stops working on the next request everywhere. Returns the token: show it once. */
export async function generateToken(db: Db): Promise<string> {
  const token = newToken();
  await saveSettings(db, { 'api.token_hash': hashToken(token) });
  return token;
}

/**
 * The token waiting to be shown is kept encrypted (AES-256-GCM) under a key derived from the session's id,
 * which only the browser's cookie carries: the database stores the id's SHA-256 alone, so a copy of the
 * database (a backup) holds neither the token nor the means to read it (docs/decisions.md §2: only the
 * token's hash is kept).
 */
const heldTokenKey = (sessionId: string) =>
  Buffer.from(hkdfSync('sha256', sessionId, Buffer.alloc(0), 'booking: API token waiting to be shown', 32));

export function sealToken(sessionId: string, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', heldTokenKey(sessionId), iv);
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

export function openToken(sessionId: string, held: string): string | null {
  const bytes = Buffer.from(held, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', heldTokenKey(sessionId), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * A new token for the admin area: the old one stops at once, and the new one is held, sealed, on the
 * session's row in the same transaction, until takeUnshownToken shows it
 * once. Never in a URL or a log, never in clear in the database.
 */
/** The admin session a new token is held for: its row's key (admin-auth's sessionKey) and its id, from the cookie. */
export interface TokenHolder {
  readonly rowKey: string;
  readonly sessionId: string;
}

export async function generateTokenToShow(db: Db, session: TokenHolder, onCreated?: OnCreated<void>): Promise<void> {
  const token = newToken();
  await db.write(async (trx) => {
    await saveSetting(trx, 'api.token_hash', hashToken(token));
    await bumpConfigVersion(trx);
    await holdUnshownToken(trx, session.rowKey, sealToken(session.sessionId, token));
    await onCreated?.(trx, undefined);
  });
}

/** The token generateTokenToShow held for this session, once: null when it was already shown (or none was made). */
export async function takeUnshownToken(db: Db, session: TokenHolder): Promise<string | null> {
  const held = await db.write((trx) => takeUnshownTokenRow(trx, session.rowKey));
  return held === null ? null : openToken(session.sessionId, held);
}

export interface GeneralSettings {
  readonly name: string;
  readonly timezone: string;
  readonly notifyEmail: string;
  /** the practice's contact details ('' for none) */
  readonly phone: string;
  readonly address: string;
  readonly website: string;
}

const GENERAL_SETTING_KEYS = {
  name: 'installation.name',
  timezone: 'installation.timezone',
  notifyEmail: 'installation.notify_email',
  phone: 'installation.phone',
  address: 'installation.address',
  website: 'installation.website',
} as const satisfies Record<keyof GeneralSettings, SettingKey>;

export type GeneralSettingsProblems = Partial<Record<keyof GeneralSettings, InvalidInput>>;

/**
 * The installation's name, zone, notification address and contact details, saved together in one
 * transaction. All are checked first, so that a page can name every wrong one: returns the problems, and saves nothing
 * unless there are none.
 */
export async function saveGeneralSettings(db: Db, input: GeneralSettings): Promise<GeneralSettingsProblems> {
  const values: Partial<Record<SettingKey, unknown>> = {};
  const problems: GeneralSettingsProblems = {};
  for (const prop of Object.keys(GENERAL_SETTING_KEYS) as (keyof GeneralSettings)[]) {
    const key = GENERAL_SETTING_KEYS[prop];
    try {
      values[key] = parseOperatorSetting(key, input[prop]);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      problems[prop] = error;
    }
  }
  if (Object.keys(problems).length === 0) await saveSettings(db, values);
  return problems;
}

/** `booking set KEY VALUE` */
export async function setOperatorSetting(db: Db, key: string, text: string): Promise<void> {
  const value = parseOperatorSetting(key, text);
  if (!(key in SETTING_KEYS)) throw new InvalidInput(`unknown setting ${key}`, 'key');
  await saveSettings(db, { [key]: value });
}

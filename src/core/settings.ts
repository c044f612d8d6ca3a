// Installation-wide settings (docs/decisions.md §1-§3) and the keys an operator may change with `booking set`.
import { InvalidInput } from './errors.js';
import { isEmailAddress } from './forms/form-fields.js';
import { TimeZone } from './time/zone.js';
import { controlCharacterProblem } from './text.js';

export interface InstallationSettings {
  readonly name: string;
  /** IANA zone; empty until setup */
  readonly timezone: string;
  readonly notifyEmail: string;
  /** setup has run: an admin exists and the zone is chosen */
  readonly configured: boolean;
  readonly apiEnabled: boolean;
  /** hex SHA-256 of the current API token, or '' when none was generated */
  readonly tokenHash: string;
  readonly rateLimitPerMinute: number;
  /** SMTP server saved in the admin area, password included; '' when none. SMTP_URL in the environment wins. */
  readonly smtpUrl: string;
  /** sender address saved in the admin area; '' means the notification address. MAIL_FROM wins. */
  readonly mailFrom: string;
  /** the practice's contact details shown in every customer mail; '' when not set */
  readonly phone: string;
  readonly address: string;
  /** an http(s) URL */
  readonly website: string;
}

export const DEFAULT_INSTALLATION: InstallationSettings = {
  name: 'Appointments',
  timezone: '',
  notifyEmail: '',
  configured: false,
  apiEnabled: false,
  tokenHash: '',
  rateLimitPerMinute: 300,
  smtpUrl: '',
  mailFrom: '',
  phone: '',
  address: '',
  website: '',
};

/** storage key -> property */
export const SETTING_KEYS = {
  'installation.name': 'name',
  'installation.timezone': 'timezone',
  'installation.notify_email': 'notifyEmail',
  'installation.configured': 'configured',
  'api.enabled': 'apiEnabled',
  'api.token_hash': 'tokenHash',
  'api.rate_limit_per_minute': 'rateLimitPerMinute',
  'mail.smtp_url': 'smtpUrl',
  'mail.from': 'mailFrom',
  'installation.phone': 'phone',
  'installation.address': 'address',
  'installation.website': 'website',
} as const satisfies Record<string, keyof InstallationSettings>;

export type SettingKey = keyof typeof SETTING_KEYS;

export function settingsFromRows(rows: readonly { key: string; value: unknown }[]): InstallationSettings {
  const settings: Record<string, unknown> = { ...DEFAULT_INSTALLATION };
  for (const { key, value } of rows) {
    const prop = SETTING_KEYS[key as SettingKey];
    if (prop) settings[prop] = value;
  }
  return settings as unknown as InstallationSettings;
}

export function parseTimezone(value: string): string {
  if (!TimeZone.find(value))
    throw new InvalidInput(`unknown time zone ${JSON.stringify(value)} (use an IANA name such as Europe/Berlin)`, 'timezone');
  return value;
}

export function parseEmail(value: string, field = 'email'): string {
  const email = value.trim();
  if (!isEmailAddress(email)) throw new InvalidInput(`${JSON.stringify(value)} is not an e-mail address`, field);
  return email;
}

/**
 * The query options an SMTP URL may carry (docs/mail.md). nodemailer turns every query parameter into a
 * transport option (`proxy`, `tls.*`, `localAddress` …), so anything else is refused: a URL can only name a
 * server, its user and password, and whether TLS is required or skipped.
 */
export const SMTP_URL_OPTIONS: readonly string[] = ['requireTLS', 'ignoreTLS'];

/** An SMTP server as nodemailer takes it: smtp:// or smtps:// with a host; '' (no server) is allowed. */
export function parseSmtpUrl(value: string, field = 'smtp_url'): string {
  const text = value.trim();
  if (text === '') return '';
  // the URL parser drops tabs and line breaks silently; the text we store must not carry them either
  if (controlCharacterProblem(text) !== null) throw new InvalidInput('must be one line without control characters', field);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidInput('not a URL: use smtp://user:password@host:587 or smtps://user:password@host:465', field);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new InvalidInput(`must start with smtp:// or smtps://, not ${url.protocol}//`, field);
  if (url.hostname === '') throw new InvalidInput('the URL names no host: use smtp://user:password@host:587', field);
  if (text.length > 2000) throw new InvalidInput('must have at most 2000 characters', field);
  if (url.pathname !== '' && url.pathname !== '/')
    throw new InvalidInput('an SMTP URL has no path: use smtp://user:password@host:587', field);
  if (url.hash !== '') throw new InvalidInput('an SMTP URL has no #fragment', field);
  const seen = new Set<string>();
  for (const [key, option] of url.searchParams) {
    if (!SMTP_URL_OPTIONS.includes(key))
      throw new InvalidInput(
        `unsupported option ${JSON.stringify(key)} in the URL: only ${SMTP_URL_OPTIONS.map((o) => `${o}=true|false`).join(' and ')} are accepted`,
        field,
      );
    if (seen.has(key)) throw new InvalidInput(`the option ${key} is given twice`, field);
    seen.add(key);
    if (option !== 'true' && option !== 'false') throw new InvalidInput(`the option ${key} must be true or false`, field);
  }
  return text;
}

/** Stands for the stored password in the admin page; sent back unchanged, it keeps that password. */
export const PASSWORD_MASK = '********';

/** The URL with its password replaced by PASSWORD_MASK, so a page can show it without revealing it. */
export function maskSmtpUrl(text: string): string {
  if (text === '') return '';
  try {
    const url = new URL(text);
    if (url.password === '') return text;
    url.password = PASSWORD_MASK;
    return url.href;
  } catch {
    return '(not a valid URL)';
  }
}

/** One line of contact text (phone, address): trimmed, no control characters, at most `max` characters; '' clears it. */
function contactLine(key: string, text: string, max: number): string {
  const value = text.trim();
  const problem = controlCharacterProblem(value);
  if (problem) {
    const reason = problem.replace(/^Must/, 'must');
    throw new InvalidInput(reason, 'value', `${key}: ${reason}`);
  }
  if (value.length > max) throw new InvalidInput(`must be at most ${max} characters`, 'value', `${key} must be at most ${max} characters`);
  return value;
}

export const MAX_PHONE_LENGTH = 40;
export const MAX_ADDRESS_LENGTH = 200;
export const MAX_WEBSITE_LENGTH = 500;

export function parsePhone(text: string): string {
  const value = contactLine('installation.phone', text, MAX_PHONE_LENGTH);
  // letters are allowed ("0800 FLOWERS", "ext. 12"), but a phone number without a digit is a typo
  if (value !== '' && !/[0-9]/.test(value))
    throw new InvalidInput('must contain a phone number', 'value', 'installation.phone must contain a phone number');
  return value;
}

export function parseAddress(text: string): string {
  return contactLine('installation.address', text, MAX_ADDRESS_LENGTH);
}

/** The practice's website: an http:// or https:// URL with a host, no user or password in it; '' clears it. */
export function parseWebsite(text: string): string {
  const value = contactLine('installation.website', text, MAX_WEBSITE_LENGTH);
  if (value === '') return '';
  const refuse = (reason: string): never => {
    throw new InvalidInput(reason, 'value', `installation.website ${reason}`);
  };
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    refuse('must be a web address starting with https:// or http://, such as https://example.com');
  }
  if (url!.protocol !== 'https:' && url!.protocol !== 'http:') refuse('must start with https:// or http://');
  if (url!.hostname === '' || /\s/.test(value)) refuse('must be a web address such as https://example.com');
  if (url!.username !== '' || url!.password !== '') refuse('must not contain a user name or password');
  return value;
}

/** What `booking set KEY VALUE` accepts: each key with the parser of its text value. */
export const OPERATOR_SETTINGS: Readonly<Record<string, (text: string) => unknown>> = {
  'api.rate_limit_per_minute': (text) => {
    if (!/^[1-9][0-9]{0,6}$/.test(text))
      throw new InvalidInput(
        'must be a whole number from 1 to 9999999',
        'value',
        'api.rate_limit_per_minute must be a whole number from 1 to 9999999',
      );
    return Number(text);
  },
  'installation.name': (text) => {
    if (text.trim() === '' || text.length > 200)
      throw new InvalidInput('must be 1 to 200 characters', 'value', 'installation.name must be 1 to 200 characters');
    const problem = controlCharacterProblem(text);
    if (problem)
      throw new InvalidInput(problem.replace(/^Must/, 'must'), 'value', `installation.name: ${problem.replace(/^Must/, 'must')}`);
    return text.trim();
  },
  'installation.timezone': (text) => parseTimezone(text),
  'installation.notify_email': (text) => parseEmail(text, 'value'),
  'mail.smtp_url': (text) => parseSmtpUrl(text, 'value'),
  'mail.from': (text) => (text.trim() === '' ? '' : parseEmail(text, 'value')),
  'installation.phone': parsePhone,
  'installation.address': parseAddress,
  'installation.website': parseWebsite,
};

export function parseOperatorSetting(key: string, text: string): unknown {
  const parse = OPERATOR_SETTINGS[key];
  if (!parse) throw new InvalidInput(`unknown setting ${JSON.stringify(key)}; known: ${Object.keys(OPERATOR_SETTINGS).join(', ')}`, 'key');
  return parse(text);
}

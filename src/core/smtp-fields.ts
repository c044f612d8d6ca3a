// The SMTP server as the E-mail page shows it: host, port, security, user and password as fields. What is
// stored is still one URL (mail.smtp_url), the form SMTP_URL and the worker take, built from the fields and
// checked by parseSmtpUrl; the page reads the fields back out of it.
import { InvalidInput } from './errors.js';
import { PASSWORD_MASK, parseSmtpUrl } from './settings.js';

/**
 * none: never STARTTLS (ignoreTLS=true, a local relay); starttls: STARTTLS required (requireTLS=true);
 * tls: TLS from the first byte (smtps://).
 */
export type SmtpSecurity = 'none' | 'starttls' | 'tls';
export const SMTP_SECURITY: readonly SmtpSecurity[] = ['starttls', 'tls', 'none'];
export const DEFAULT_PORT: Readonly<Record<SmtpSecurity, number>> = { starttls: 587, tls: 465, none: 25 };

export interface SmtpFields {
  host: string;
  /** '' for the security's usual port */
  port: string;
  security: SmtpSecurity;
  user: string;
  /** PASSWORD_MASK stands for the stored password */
  password: string;
}

export const EMPTY_SMTP_FIELDS: SmtpFields = { host: '', port: '', security: 'starttls', user: '', password: '' };

/**
 * The fields of a stored URL, password masked. A URL without an option (STARTTLS when the server offers it,
 * as SMTP_URL may say) reads as starttls: saved again it requires STARTTLS, which only tightens it.
 */
export function smtpFieldsFromUrl(text: string): SmtpFields {
  if (text === '') return { ...EMPTY_SMTP_FIELDS };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ...EMPTY_SMTP_FIELDS };
  }
  const security: SmtpSecurity = url.protocol === 'smtps:' ? 'tls' : url.searchParams.get('ignoreTLS') === 'true' ? 'none' : 'starttls';
  return {
    host: url.hostname,
    port: url.port || String(DEFAULT_PORT[security]),
    security,
    user: decodeURIComponent(url.username),
    password: url.password === '' ? '' : PASSWORD_MASK,
  };
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\[[0-9A-Fa-f:.]+\]$/;

/** Which field a message is about, for the form's error beside it. */
export type SmtpFieldName = 'smtp_host' | 'smtp_port' | 'smtp_security' | 'smtp_user' | 'smtp_password';

/**
 * The URL to store for the fields, or InvalidInput naming the field. An empty host means no server (''),
 * whatever the other fields say. The mask as password keeps the stored password only when host, port,
 * security and user are those of the stored URL: otherwise a signed-in attacker could send the password to
 * a server of theirs, or without TLS (docs/security.md).
 */
export function smtpUrlFromFields(fields: SmtpFields, stored: string): string {
  const host = fields.host.trim();
  if (host === '') return '';
  if (!HOST.test(host) || host.length > 253)
    throw new InvalidInput('must be a host name such as mail.example.com, or an IP address', 'smtp_host');
  if (!SMTP_SECURITY.includes(fields.security)) throw new InvalidInput('choose STARTTLS, TLS or none', 'smtp_security');
  const portText = fields.port.trim();
  if (portText !== '' && !/^[1-9][0-9]{0,4}$/.test(portText)) throw new InvalidInput('must be a number from 1 to 65535', 'smtp_port');
  const port = portText === '' ? DEFAULT_PORT[fields.security] : Number(portText);
  if (port > 65535) throw new InvalidInput('must be a number from 1 to 65535', 'smtp_port');
  const user = fields.user.trim();
  if (fields.password !== '' && user === '') throw new InvalidInput('a password needs a user name', 'smtp_user');

  let password = fields.password;
  if (password === PASSWORD_MASK) {
    const old = stored === '' ? null : smtpFieldsFromUrl(stored);
    const same =
      old !== null &&
      old.password === PASSWORD_MASK &&
      old.host.toLowerCase() === host.toLowerCase() &&
      Number(old.port) === port &&
      old.security === fields.security &&
      old.user === user;
    if (!same)
      throw new InvalidInput(
        `the server, port, security or user changed: type the password again instead of ${PASSWORD_MASK} (it is kept only while the rest is unchanged)`,
        'smtp_password',
      );
    password = decodeURIComponent(new URL(stored).password);
  }

  const url = new URL(`${fields.security === 'tls' ? 'smtps' : 'smtp'}://${host}`);
  url.port = String(port);
  // the URL setters percent-encode what a user name or password may contain (@, :, /, %)
  url.username = user;
  url.password = password;
  if (fields.security === 'starttls') url.searchParams.set('requireTLS', 'true');
  if (fields.security === 'none') url.searchParams.set('ignoreTLS', 'true');
  // URL drops the port when it is the scheme's default; smtp: and smtps: have none, so it stays
  return parseSmtpUrl(url.href, 'smtp_host');
}

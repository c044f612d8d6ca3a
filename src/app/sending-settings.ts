// The SMTP server and sender address an operator saves in the admin area, and the E-mail page's checks of
// them (a connection test, a test message). SMTP_URL and MAIL_FROM in the environment win over what is saved:
// a field the environment sets is neither checked nor saved.
import type { Db } from '../db/connect.js';
import { saveSettings } from './installation.js';
import { InvalidInput } from '../core/errors.js';
import { parseEmail, type SettingKey } from '../core/settings.js';
import { smtpUrlFromFields, type SmtpFields } from '../core/smtp-fields.js';
import { checkRate, MemoryRateLimitStore } from '../rate-limit/rate-limiter.js';
import { plainSmtpError, sendDirect, verifySmtp } from '../mail/smtp-transport.js';

export interface SendingSettingsInput {
  /** an empty host for no server; the password given as the mask keeps the stored one */
  smtp: SmtpFields;
  /** '' for the notification address */
  mailFrom: string;
}

/** Which fields the environment sets. */
export interface FixedSending {
  smtpUrl: boolean;
  mailFrom: boolean;
}

/** Errors by form field (smtp_host, smtp_port, smtp_security, smtp_user, smtp_password, mail_from). */
export type SendingSettingsErrors = Partial<Record<string, InvalidInput>>;

function checked<T>(parse: () => T): T | InvalidInput {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInput) return error;
    throw error;
  }
}

/** The URL the fields stand for (the stored password put back for the mask when allowed), or the errors. */
export function smtpUrlOfFields(fields: SmtpFields, storedSmtpUrl: string): string | SendingSettingsErrors {
  const url = checked(() => smtpUrlFromFields(fields, storedSmtpUrl));
  return url instanceof InvalidInput ? { [url.path ?? 'smtp_host']: url } : url;
}

/**
 * Checks every field first and saves them in one transaction, so that nothing is saved when one is wrong.
 * Returns the errors by field; none when saved.
 */
export async function saveSendingSettings(
  db: Db,
  input: SendingSettingsInput,
  fixed: FixedSending,
  storedSmtpUrl: string,
): Promise<SendingSettingsErrors> {
  const smtpUrl = fixed.smtpUrl ? null : smtpUrlOfFields(input.smtp, storedSmtpUrl);
  const mailFrom = fixed.mailFrom ? null : input.mailFrom === '' ? '' : checked(() => parseEmail(input.mailFrom, 'mail_from'));
  const errors: SendingSettingsErrors = typeof smtpUrl === 'object' && smtpUrl !== null ? { ...smtpUrl } : {};
  if (mailFrom instanceof InvalidInput) errors.mail_from = mailFrom;
  if (Object.keys(errors).length > 0) return errors;
  const changes: Partial<Record<SettingKey, string>> = {};
  if (typeof smtpUrl === 'string') changes['mail.smtp_url'] = smtpUrl;
  if (typeof mailFrom === 'string') changes['mail.from'] = mailFrom;
  if (Object.keys(changes).length > 0) await saveSettings(db, changes);
  return errors;
}

/** How long a check from the E-mail page may wait for the server: the operator is waiting for the page. */
export const CHECK_WAIT_MS = 15_000;
/** Checks from the E-mail page (tests and test messages together) per window, per process. */
export const CHECKS_PER_WINDOW = 5;
export const CHECK_WINDOW_MS = 10 * 60_000;

export type CheckOutcome = { ok: true } | { ok: false; error: string } | { ok: false; throttled: number };

/**
 * The E-mail page's tests, throttled together: a signed-in session must not be able to use them to send mail
 * to anyone in bulk, or to probe other hosts' ports, faster than an operator setting up mail would.
 */
export class SendingChecks {
  private readonly store = new MemoryRateLimitStore();

  constructor(private readonly waitMs = CHECK_WAIT_MS) {}

  private async throttled(now: number): Promise<number | null> {
    const decision = await checkRate(this.store, 'mail-checks', CHECKS_PER_WINDOW, now, CHECK_WINDOW_MS);
    return decision.allowed ? null : decision.resetSeconds;
  }

  /** Connects and authenticates without sending (nodemailer's verify()). */
  async testConnection(url: string, now: number): Promise<CheckOutcome> {
    const wait = await this.throttled(now);
    if (wait !== null) return { ok: false, throttled: wait };
    try {
      await verifySmtp(url, this.waitMs);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: plainSmtpError(error) };
    }
  }

  /** Sends one short message straight through the server, past the outbox: the answer is the server's. */
  async sendTest(url: string, mail: { from: string; fromName: string; to: string }, now: number): Promise<CheckOutcome> {
    const wait = await this.throttled(now);
    if (wait !== null) return { ok: false, throttled: wait };
    try {
      await sendDirect(url, this.waitMs, {
        ...mail,
        subject: `Test message from ${mail.fromName}`,
        text: `This is a test message sent from the E-mail page of ${mail.fromName}'s booking system.\n\nIt arrived: the SMTP server accepts mail from ${mail.from}.\n`,
      });
      return { ok: true };
    } catch (error) {
      return { ok: false, error: plainSmtpError(error) };
    }
  }
}

// The SMTP server and sender address an operator saves in the admin area. SMTP_URL and MAIL_FROM in the
// environment win over them: a field the environment sets is neither checked nor saved.
import type { Db } from '../db/connect.js';
import { saveSettings } from './installation.js';
import { InvalidInput } from '../core/errors.js';
import { parseEmail, parseSmtpUrl, unmaskSmtpUrl, type SettingKey } from '../core/settings.js';

export interface SendingSettingsInput {
  /** '' for no server; a password given as the mask keeps the stored one */
  smtpUrl: string;
  /** '' for the notification address */
  mailFrom: string;
}

/** Which fields the environment sets. */
export interface FixedSending {
  smtpUrl: boolean;
  mailFrom: boolean;
}

export type SendingSettingsErrors = Partial<Record<keyof SendingSettingsInput, InvalidInput>>;

function checked<T>(parse: () => T): T | InvalidInput {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInput) return error;
    throw error;
  }
}

/**
 * Checks both fields first and saves them in one transaction, so that nothing is saved when one is wrong.
 * Returns the errors by field; none when saved.
 */
export async function saveSendingSettings(
  db: Db,
  input: SendingSettingsInput,
  fixed: FixedSending,
  storedSmtpUrl: string,
): Promise<SendingSettingsErrors> {
  const smtpUrl = fixed.smtpUrl ? null : checked(() => unmaskSmtpUrl(parseSmtpUrl(input.smtpUrl), storedSmtpUrl));
  const mailFrom = fixed.mailFrom ? null : input.mailFrom === '' ? '' : checked(() => parseEmail(input.mailFrom, 'mail_from'));
  const errors: SendingSettingsErrors = {};
  if (smtpUrl instanceof InvalidInput) errors.smtpUrl = smtpUrl;
  if (mailFrom instanceof InvalidInput) errors.mailFrom = mailFrom;
  if (errors.smtpUrl || errors.mailFrom) return errors;
  const changes: Partial<Record<SettingKey, string>> = {};
  if (typeof smtpUrl === 'string') changes['mail.smtp_url'] = smtpUrl;
  if (typeof mailFrom === 'string') changes['mail.from'] = mailFrom;
  if (Object.keys(changes).length > 0) await saveSettings(db, changes);
  return errors;
}

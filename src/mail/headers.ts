// Header safety. Customer values (a name, a reason) may end up in a Subject or a display name; a CR or LF
// there could start a new header line or add a recipient. nodemailer encodes header values, and we also
// flatten every control character to a space first, so no input can ever add a line.
import { isEmailAddress } from '../core/forms/form-fields.js';

export function headerText(value: string, maxLength = 200): string {
  const flat = value.replace(/[\x00-\x1f\x7f\u2028\u2029]+/g, ' ').replace(/ {2,}/g, ' ').trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}

/** The address to queue a message to, or null when there is none we could deliver to. */
export function mailRecipient(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const address = value.trim();
  return isEmailAddress(address) ? address : null;
}

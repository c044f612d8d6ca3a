// Pure string helpers shared by the admin pages and the e-mails.

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

// Header safety. Customer values (a name, a reason) may end up in a Subject or a display name; a CR or LF
// there could start a new header line or add a recipient. nodemailer encodes header values, and we also
// flatten every control character to a space first, so no input can ever add a line.
export function headerText(value: string, maxLength = 200): string {
  const flat = value
    .replace(/[\x00-\x1f\x7f\u2028\u2029]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}

/** "Ada Lovelace"; either part may be empty. */
export function personName(firstName: string, lastName: string): string {
  return `${firstName} ${lastName}`.trim();
}

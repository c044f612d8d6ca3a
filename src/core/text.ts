// Pure string helpers shared by the admin pages and the e-mails.

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

// Header safety. Customer values (a name, a reason) may end up in a Subject or a display name; a CR or LF
// there could start a new header line or add a recipient. nodemailer encodes header values, and we also
// flatten every control character to a space first, so no input can ever add a line.
export function headerText(value: string, maxLength = 200): string {
  const flat = singleLine(value).trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}

/** "Ada Lovelace"; either part may be empty. */
export function personName(firstName: string, lastName: string): string {
  return `${firstName} ${lastName}`.trim();
}

// Control characters in input (docs/security.md "Control characters"). Never accepted anywhere: C0 controls
// other than TAB, LF and CR; DEL; C1 controls; the bidi overrides and isolates (U+202A-U+202E,
// U+2066-U+2069), which make text display in another order than it is stored. TAB, LF, CR and the Unicode
// line and paragraph separators (U+2028, U+2029) are accepted in multi-line values only.
// Each pattern is one character class: a single linear scan, no backtracking.
const NEVER_ALLOWED = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const MULTI_LINE_ONLY = /[\t\n\r\u2028\u2029]/;

export const CONTROL_CHARACTERS_MESSAGE = 'Must not contain control characters';
export const SINGLE_LINE_MESSAGE = 'Must be a single line';

/** null when the text is acceptable; otherwise what is wrong with it. */
export function controlCharacterProblem(text: string, multiLine = false): string | null {
  if (NEVER_ALLOWED.test(text)) return CONTROL_CHARACTERS_MESSAGE;
  if (!multiLine && MULTI_LINE_ONLY.test(text)) return SINGLE_LINE_MESSAGE;
  return null;
}

/**
 * A value rendered on one line (a name in an e-mail body, a label in the .ics, a table cell): every
 * control, line or paragraph separator and bidi control becomes a space, runs of spaces collapse. Values
 * stored before control characters were refused still render on one line.
 */
export function singleLine(value: string): string {
  return value.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ').replace(/ {2,}/g, ' ');
}

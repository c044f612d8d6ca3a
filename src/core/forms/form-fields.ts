// A schedule's booking form (docs/decisions.md §4 "Forms") and the validation of a submission against it (§5).
import { parseDate } from '../time/calendar.js';
import { controlCharacterProblem } from '../text.js';

export const FORM_TYPES = ['textbox', 'textarea', 'checkbox', 'select'] as const;
export const INPUT_TYPES = ['text', 'email', 'tel', 'number', 'date'] as const;
export type FormType = (typeof FORM_TYPES)[number];
export type InputType = (typeof INPUT_TYPES)[number];

export interface FormField {
  readonly name: string;
  readonly label: string;
  readonly formType: FormType;
  readonly inputType: InputType;
  readonly required: boolean;
  /** choices of a select; empty otherwise */
  readonly options: readonly string[];
  /** default value shown to the customer */
  readonly value: string;
}

/** Never shown through the API, never required, ignored when submitted (docs/decisions.md §4). */
export const HIDDEN_FIELD = 'password';

export const FIELD_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Names FIELD_NAME_RE allows that mean something to a JavaScript object: refused as field names. */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** null when `name` may name a form field; otherwise why not. */
export function fieldNameProblem(name: string): string | null {
  if (!FIELD_NAME_RE.test(name)) return 'field names are letters, digits and _ (at most 64), not starting with a digit';
  if (RESERVED_FIELD_NAMES.has(name)) return `${name} is reserved: choose another field name`;
  return null;
}
export const MAX_VALUE_LENGTH = 1000;

export const DEFAULT_FORM: readonly FormField[] = [
  { name: 'first_name', label: 'First name', formType: 'textbox', inputType: 'text', required: false, options: [], value: '' },
  { name: 'last_name', label: 'Last name', formType: 'textbox', inputType: 'text', required: false, options: [], value: '' },
  { name: 'email', label: 'E-mail', formType: 'textbox', inputType: 'email', required: true, options: [], value: '' },
  { name: 'phone', label: 'Phone', formType: 'textbox', inputType: 'tel', required: false, options: [], value: '' },
];

/** The fields a customer fills: the form without the hidden password field. */
export function publicFields(form: readonly FormField[]): FormField[] {
  return form.filter((f) => f.name !== HIDDEN_FIELD);
}

export type Answer = string | boolean;

/** A text answer by field name; '' when not answered or not text. */
export function answerText(answers: Readonly<Record<string, Answer>>, name: string): string {
  const value = answers[name];
  return typeof value === 'string' ? value : '';
}

export type SubmissionResult =
  | { readonly ok: true; readonly answers: Readonly<Record<string, Answer>> }
  | { readonly ok: false; readonly field: string; readonly message: string };

export const FIELD_REQUIRED = 'Field is required';

// Deliberately plain: a local part of printable ASCII "atext" (RFC 5322 §3.2.3: no spaces, quotes, controls,
// non-ASCII, nothing a mail header would encode, so the address in the header and the envelope are the same
// text), one '@', a dot in the ASCII domain. Linear: each part is a character class the next part cannot
// start with ('@', '.'), so there is one way to match.
const EMAIL_RE =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const TEL_RE = /^[0-9 +\-().]+$/;
const NUMBER_RE = /^\s*-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

export function isEmailAddress(text: string): boolean {
  // '=?' would start an RFC 2047 encoded word, which a mail program may decode into another address
  return text.length <= 254 && EMAIL_RE.test(text) && !text.includes('=?');
}

type Checked = { answer: Answer | undefined } | { error: string };

function checkField(field: FormField, raw: unknown): Checked {
  const absent = raw === undefined || raw === null;
  if (field.formType === 'checkbox') {
    if (absent) return field.required ? { error: FIELD_REQUIRED } : { answer: undefined };
    if (typeof raw !== 'boolean') return { error: 'Must be true or false' };
    if (field.required && !raw) return { error: FIELD_REQUIRED };
    return { answer: raw };
  }
  let text: string;
  if (absent) text = '';
  else if (typeof raw === 'string') text = raw;
  else if (typeof raw === 'number' && Number.isFinite(raw)) text = String(raw);
  else return { error: 'Must be a string' };
  if (text.trim() === '') return field.required ? { error: FIELD_REQUIRED } : { answer: undefined };
  if (text.length > MAX_VALUE_LENGTH) return { error: `Must be at most ${MAX_VALUE_LENGTH} characters` };
  if (field.formType === 'select' && !field.options.includes(text)) return { error: 'Must be one of the options' };
  switch (field.inputType) {
    case 'email':
      if (!isEmailAddress(text.trim())) return { error: 'Must be an e-mail address' };
      return { answer: text.trim() };
    case 'tel':
      if (!TEL_RE.test(text) || (text.match(/\d/g)?.length ?? 0) < 5) return { error: 'Must be a phone number' };
      break;
    case 'number':
      if (!NUMBER_RE.test(text) || !Number.isFinite(Number(text))) return { error: 'Must be a number' };
      break;
    case 'date':
      if (parseDate(text.trim()) === null) return { error: 'Must be a date (YYYY-MM-DD)' };
      break;
    case 'text':
      break;
  }
  // after the type checks (they already refuse controls), so their messages stay as they were
  const control = controlCharacterProblem(text, field.formType === 'textarea');
  if (control) return { error: control };
  return { answer: text };
}

/**
 * Checks a submission field by field in the form's order; the first failure wins.
 * Keys the form does not define, and the password field, are dropped.
 */
export function validateSubmission(form: readonly FormField[], submission: Readonly<Record<string, unknown>>): SubmissionResult {
  // keyed in a Map, made an object by Object.fromEntries: every name becomes an own data property, never a
  // prototype change, whatever the name (reserved names are refused in the form already; this keeps it so)
  const answers = new Map<string, Answer>();
  for (const field of publicFields(form)) {
    const raw = Object.hasOwn(submission, field.name) ? submission[field.name] : undefined;
    const checked = checkField(field, raw);
    if ('error' in checked) return { ok: false, field: field.name, message: checked.error };
    if (checked.answer !== undefined) answers.set(field.name, checked.answer);
  }
  return { ok: true, answers: Object.fromEntries(answers) };
}

// The schedule page's forms, text to typed input and back. The text is turned into the import file's
// shape and checked by core's parsers, so `booking import` and the admin area apply one set of rules; every
// problem is collected with the form field it is about (FormProblems), so a page shows them all at once,
// each beside its field.
import { InvalidInput } from '../../core/errors.js';
import {
  DEFAULT_SETTINGS,
  SETTING_FIELDS,
  parseExceptions,
  parseFormField,
  parseIntervals,
  parseName,
  parseReason,
  parseReminderMinutes,
  parseSettings,
} from '../../core/schedules/schedule-definition.js';
import type { DateException, Interval, ReasonDefinition, ScheduleSettings, StoredSchedule } from '../../core/schedules/schedule.js';
import type { FormField } from '../../core/forms/form-fields.js';
import { WEEKDAYS, formatClock } from '../../core/time/calendar.js';
import type { ScheduleEdit } from '../../app/admin-schedules.js';
import { text, type FormInput } from './form-input.js';

/** Every problem of a submitted form, by field name: a page shows them all at once, each beside its field. */
export class FormProblems extends Error {
  constructor(readonly problems: Readonly<Record<string, string>>) {
    super('the form has problems');
    this.name = 'FormProblems';
  }
}

/** Collects the InvalidInputs of several parsers, one per field, instead of stopping at the first. */
class ProblemCollector {
  readonly problems: Record<string, string> = {};

  take<T>(field: string, parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      this.problems[field] ??= error.reason;
      return undefined;
    }
  }

  throwIfAny(): void {
    if (Object.keys(this.problems).length > 0) throw new FormProblems(this.problems);
  }
}

function integerField(value: string): unknown {
  const t = value.trim();
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

const isDash = (c: string | undefined) => c === '-' || c === '–';

/**
 * "09:00-12:00" or "09:00 - 12:00" -> ["09:00", "12:00"], as /^(\S+?)\s*[-–]\s*(\S+)$/ splits it but in
 * linear time (that regex backtracks quadratically on a long piece); anything else is passed on for the
 * parser to name.
 */
function intervalFromText(piece: string): unknown {
  const words = piece.split(/\s+/);
  if (words.length === 1) {
    const dash = piece.slice(1).search(/[-–]/) + 1;
    return dash > 0 && dash < piece.length - 1 ? [piece.slice(0, dash), piece.slice(dash + 1)] : piece;
  }
  if (words.length === 2) {
    const [start = '', end = ''] = words;
    if (start.length > 1 && isDash(start.at(-1))) return [start.slice(0, -1), end];
    if (end.length > 1 && isDash(end[0])) return [start, end.slice(1)];
  }
  if (words.length === 3 && isDash(words[1])) return [words[0], words[2]];
  return piece;
}

/** A clock as people type it, "8", "8:30", "8.30" or "08:30", as "08:30"; anything else unchanged, for the parser to name. */
function clockFromText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = /^(\d{1,2})(?:[:.](\d{2}))?$/.exec(value);
  return match ? `${match[1]!.padStart(2, '0')}:${match[2] ?? '00'}` : value;
}

/** "09:00-12:00, 13:00-17:00" (or "8-12, 13-17") -> [["09:00","12:00"],["13:00","17:00"]] */
const intervalsFromText = (value: string): unknown[] =>
  value
    .split(/[,;\n]/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map(intervalFromText)
    .map((interval) => (Array.isArray(interval) ? interval.map(clockFromText) : interval));

export const intervalsToText = (intervals: readonly Interval[]) =>
  intervals.map((i) => `${formatClock(i.start)}-${formatClock(i.end)}`).join(', ');

/** A weekday's time inputs: hours_mon_0_from, hours_mon_0_to, hours_mon_1_from, … */
export const hourField = (day: string, index: number, end: 'from' | 'to') => `hours_${day}_${index}_${end}`;

/** A time input cannot hold 24:00, so the end of the day is shown as 00:00 (read back as 24:00). */
const timeInputValue = (minutes: number) => (minutes === 1440 ? '00:00' : formatClock(minutes));

/** The indices of a day's interval inputs in a form (or in the page's values), ascending. */
export function intervalIndices(values: FormInput, day: string): number[] {
  const pattern = new RegExp(`^hours_${day}_(\\d{1,2})_(?:from|to)$`);
  const found = new Set<number>();
  for (const key of Object.keys(values)) {
    const match = pattern.exec(key);
    if (match) found.add(Number(match[1]));
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * A day's intervals from its time inputs, in the parser's shape; a pair left empty is ignored. An end of
 * 00:00 is the end of the day. A browser without time inputs shows text fields, so "8" or "8.30" is read
 * as people type it.
 */
function intervalsFromTimeInputs(input: FormInput, day: string, field: string): unknown[] {
  // a time is short: a longer value is refused before the parser would quote it in its message
  const time = (i: number, end: 'from' | 'to') => {
    const value = text(input, hourField(day, i, end)).trim();
    if (value.length > 8) throw InvalidInput.at(field, 'a time is written HH:MM, e.g. 09:30');
    return value;
  };
  return intervalIndices(input, day).flatMap((i) => {
    const from = time(i, 'from');
    const to = time(i, 'to');
    if (from === '' && to === '') return [];
    if (from === '' || to === '') throw InvalidInput.at(field, 'an interval needs a start and an end: fill both times, or empty both');
    const end = clockFromText(to);
    return [[clockFromText(from), end === '00:00' ? '24:00' : end]];
  });
}

/** Exceptions, one per line: "2026-12-24 closed" or "2026-12-27 10:00-12:00, 14:00-16:00". */
function exceptionsFromText(value: string): unknown[] {
  return value
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [date = '', ...rest] = line.split(/\s+/);
      const hours = rest.join(' ');
      return { date, hours: /^closed$/i.test(hours) || hours === '' ? [] : intervalsFromText(hours) };
    });
}

export const exceptionsToText = (exceptions: readonly DateException[]) =>
  exceptions.map((e) => `${e.date} ${e.hours.length ? intervalsToText(e.hours) : 'closed'}`).join('\n');

const REMINDER_UNITS: Readonly<Record<string, number>> = {
  m: 1,
  min: 1,
  mins: 1,
  minute: 1,
  minutes: 1,
  h: 60,
  hr: 60,
  hrs: 60,
  hour: 60,
  hours: 60,
  d: 1440,
  day: 1440,
  days: 1440,
  w: 10_080,
  week: 10_080,
  weeks: 10_080,
};

/**
 * The reminders as people type them: "24 hours, 2 hours", "1 day; 30 min", or bare minutes "1440, 120".
 * Separated by commas, semicolons or line breaks; a number without a unit is minutes. Returns the minutes
 * in the order typed (core's parseReminderMinutes checks the range and duplicates) or throws with the
 * part it could not read. The pattern is linear: one number, optional spaces, one word.
 */
export function reminderMinutesFromText(value: string, field = 'reminder_minutes_before'): number[] {
  return value
    .split(/[,;\n]/)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const match = /^(\d{1,7}(?:\.\d{1,2})?)\s*([a-z]*)$/i.exec(part);
      const unit = match ? REMINDER_UNITS[(match[2] || 'minutes').toLowerCase()] : undefined;
      if (!match || unit === undefined)
        throw InvalidInput.at(field, `"${part}" is not a time before the appointment: write e.g. 24 hours, 2 hours or 30 minutes`);
      const minutes = Number(match[1]) * unit;
      if (!Number.isInteger(minutes)) throw InvalidInput.at(field, `"${part}" is not a whole number of minutes`);
      if (minutes < 1) throw InvalidInput.at(field, `"${part}": a reminder must be at least 1 minute before the appointment`);
      return minutes;
    });
}

/** Minutes as the page shows them: "2 days", "24 hours", "90 minutes" (whole days from 2 days up). */
export function reminderMinutesToText(minutes: readonly number[]): string {
  const one = (m: number) => {
    if (m % 1440 === 0 && m >= 2880) return `${m / 1440} days`;
    if (m % 60 === 0) return m === 60 ? '1 hour' : `${m / 60} hours`;
    return m === 1 ? '1 minute' : `${m} minutes`;
  };
  return minutes.map(one).join(', ');
}

/** Caps on the multi-line texts of the schedule form (docs/security.md "Input limits"). */
export const MAX_HOURS_TEXT = 2_000;
export const MAX_EXCEPTIONS_TEXT = 16_000;
export const MAX_REMINDERS_TEXT = 200;

/** A field's text, refused when longer than `max` characters. */
function capped(input: FormInput, field: string, max: number): string {
  const value = text(input, field);
  if (value.length > max) throw InvalidInput.at(field, `must be at most ${max} characters`);
  return value;
}

/** Name, settings, weekly hours and exceptions from the schedule form; every problem at once (FormProblems). */
export function scheduleFromForm(input: FormInput): ScheduleEdit {
  const found = new ProblemCollector();
  const name = found.take('name', () => parseName(text(input, 'name'), 'name'));
  const settings: { -readonly [K in keyof ScheduleSettings]: number } = { ...DEFAULT_SETTINGS };
  for (const { key, prop } of SETTING_FIELDS) {
    // a form without the manage link's cut-off (added later than the others; a page open across an upgrade,
    // a script) keeps the default instead of failing: absence means "until the start", an empty field is wrong
    if (key === 'cancel_cutoff_minutes' && !Object.hasOwn(input, key)) continue;
    // one setting at a time, so that each wrong one is named
    const value = found.take(key, () => parseSettings({ [key]: integerField(text(input, key)) }, '')[prop]);
    if (value !== undefined) settings[prop] = value;
  }
  const weeklyHours = Object.fromEntries(
    WEEKDAYS.map((d) => {
      const field = `weekly_hours.${d}`;
      const typed = () => capped(input, field, MAX_HOURS_TEXT);
      const intervals = () => (typed().trim() !== '' ? intervalsFromText(typed()) : intervalsFromTimeInputs(input, d, field));
      return [d, found.take(field, () => parseIntervals(intervals(), field)) ?? []];
    }),
  );
  const exceptions = found.take('exceptions', () =>
    parseExceptions(exceptionsFromText(capped(input, 'exceptions', MAX_EXCEPTIONS_TEXT)), 'exceptions'),
  );
  const reminders = found.take('reminder_minutes_before', () =>
    parseReminderMinutes(reminderMinutesFromText(capped(input, 'reminder_minutes_before', MAX_REMINDERS_TEXT)), 'reminder_minutes_before'),
  );
  found.throwIfAny();
  return { name: name!, settings, weeklyHours, exceptions: exceptions!, reminderMinutesBefore: reminders! };
}

/** The form's values of a schedule, or of a new one. */
export function scheduleValues(s: StoredSchedule | null): Record<string, string> {
  const values: Record<string, string> = { name: s?.name ?? '' };
  for (const { key, prop } of SETTING_FIELDS) values[key] = String((s?.settings ?? DEFAULT_SETTINGS)[prop]);
  for (const day of WEEKDAYS) {
    // the text field stays empty: it is for typing hours instead of using the time inputs
    values[`weekly_hours.${day}`] = '';
    (s?.weeklyHours[day] ?? []).forEach((interval, i) => {
      values[hourField(day, i, 'from')] = formatClock(interval.start);
      values[hourField(day, i, 'to')] = timeInputValue(interval.end);
    });
  }
  values.exceptions = s ? exceptionsToText(s.exceptions) : '';
  values.reminder_minutes_before = s ? reminderMinutesToText(s.reminderMinutesBefore) : '';
  return values;
}

/** The schedule form's values as typed, the text fields and every interval input, to show the form again. */
export function scheduleValuesFromInput(input: FormInput): Record<string, string> {
  const values = Object.fromEntries(Object.keys(scheduleValues(null)).map((k) => [k, text(input, k)]));
  for (const day of WEEKDAYS)
    for (const i of intervalIndices(input, day))
      for (const end of ['from', 'to'] as const) values[hourField(day, i, end)] = text(input, hourField(day, i, end));
  return values;
}

/**
 * "Add interval" (`add:mon`) and "Remove" (`remove:mon:2`) without JavaScript: the values with one more
 * empty pair, or one pair fewer; null for any other action.
 */
export function valuesAfterHoursAction(values: Record<string, string>, action: string): Record<string, string> | null {
  const match = /^(add|remove):(mon|tue|wed|thu|fri|sat|sun)(?::(\d{1,2}))?$/.exec(action);
  if (!match) return null;
  const [, what, day = ''] = match;
  const next = { ...values };
  if (what === 'add') {
    const last = intervalIndices(values, day).at(-1) ?? -1;
    next[hourField(day, last + 1, 'from')] = '';
    next[hourField(day, last + 1, 'to')] = '';
  } else {
    delete next[hourField(day, Number(match[3]), 'from')];
    delete next[hourField(day, Number(match[3]), 'to')];
  }
  return next;
}

export interface ReasonValues {
  readonly name: string;
  readonly description: string;
  readonly duration_minutes: string;
}

/** A reason's inputs; each reason's inputs carry a prefix, so that element ids stay unique on the page. */
export const reasonValues = (input: FormInput, prefix: string): ReasonValues => ({
  name: text(input, prefix + 'name'),
  description: text(input, prefix + 'description'),
  duration_minutes: text(input, prefix + 'duration_minutes'),
});

/** A reason from its inputs; every problem at once (FormProblems, keyed name, description, duration_minutes). */
export function reasonFromForm(values: ReasonValues): ReasonDefinition {
  const found = new ProblemCollector();
  const only = (key: keyof ReasonValues, value: unknown) => {
    const item = { name: 'x', description: '', duration_minutes: 1, [key]: value };
    return found.take(key, () => parseReason(item, ''));
  };
  only('name', values.name);
  only('description', values.description);
  only('duration_minutes', integerField(values.duration_minutes));
  found.throwIfAny();
  return parseReason({ name: values.name, description: values.description, duration_minutes: integerField(values.duration_minutes) }, '');
}

export interface FormRowInput {
  /** the row number in the submitted form, to show an error beside it */
  row: number;
  position: number;
  name: string;
  label: string;
  formType: string;
  inputType: string;
  required: boolean;
  options: string;
  remove: boolean;
}

/** The form editor's rows (f0_name, f0_label, …; the last one is blank for adding a field). */
export function formRowsFromInput(input: FormInput): FormRowInput[] {
  const count = Math.min(Number(text(input, 'rows')) || 0, 200);
  const rows: FormRowInput[] = [];
  for (let i = 0; i < count; i++) {
    const get = (k: string) => text(input, `f${i}_${k}`);
    rows.push({
      row: i,
      position: Number(get('position')) || i + 1,
      name: get('name').trim(),
      label: get('label'),
      formType: get('form_type'),
      inputType: get('input_type'),
      required: get('required') === 'on',
      options: get('options'),
      remove: get('remove') === 'on',
    });
  }
  return rows;
}

/** A row nothing was typed into (the editor's empty rows): ignored, while a label without a name is a problem. */
export const isBlankRow = (r: FormRowInput) => r.name === '' && r.label.trim() === '' && r.options.trim() === '';

/** An empty row of the editor, numbered `row`. */
export const blankRow = (row: number): FormRowInput => ({
  row,
  position: row + 1,
  name: '',
  label: '',
  formType: 'textbox',
  inputType: 'text',
  required: false,
  options: '',
  remove: false,
});

/** Checks the rows with the import file's rules; every problem at once (FormProblems keyed "f<row>_<what>"). */
export function formFromRows(rows: readonly FormRowInput[]): FormField[] {
  const kept = rows
    .filter((r) => !r.remove && !isBlankRow(r))
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.position - b.r.position || a.i - b.i)
    .map(({ r }) => r);
  const seen = new Set<string>();
  const problems: Record<string, string> = {};
  const fields: FormField[] = [];
  for (const r of kept) {
    if (seen.has(r.name)) {
      problems[`f${r.row}_name`] = `the field name ${r.name} is used twice`;
      continue;
    }
    seen.add(r.name);
    const options = r.options
      .split('\n')
      .map((o) => o.trim())
      .filter(Boolean);
    const spec = {
      label: r.label.trim() === '' ? r.name : r.label,
      form_type: r.formType,
      input_type: r.inputType,
      required: r.required,
      ...(r.formType === 'select' ? { options } : {}),
    };
    try {
      fields.push(parseFormField(r.name, spec, ''));
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      // parsed at the top, the path is the spec's key, or '' for the name itself
      problems[`f${r.row}_${error.path || 'name'}`] = error.reason;
    }
  }
  if (Object.keys(problems).length > 0) throw new FormProblems(problems);
  return fields;
}

/** A stored form as the editor's rows. */
export const formRowsOf = (s: StoredSchedule): FormRowInput[] =>
  s.form.map((f, i) => ({
    row: i,
    position: i + 1,
    name: f.name,
    label: f.label,
    formType: f.formType,
    inputType: f.inputType,
    required: f.required,
    options: f.options.join('\n'),
    remove: false,
  }));

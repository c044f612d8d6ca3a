// A schedule as an operator describes it (the import file of docs/decisions.md §6, and the admin area's forms),
// checked whole before anything is stored.
import { InvalidInput } from '../errors.js';
import { controlCharacterProblem } from '../text.js';
import { WEEKDAYS, formatClock, parseClock, parseDate, type Weekday } from '../time/calendar.js';
import { MAX_BUFFER_MINUTES, MAX_DURATION_MINUTES } from '../availability/free-slots.js';
import { DEFAULT_FORM, fieldNameProblem, FORM_TYPES, INPUT_TYPES, type FormField } from '../forms/form-fields.js';
import type { DateException, Interval, ReasonDefinition, ScheduleDefinition, ScheduleSettings, WeeklyHours } from './schedule.js';

export const DEFAULT_SETTINGS: ScheduleSettings = {
  slotIntervalMinutes: 15,
  minNoticeMinutes: 0,
  horizonDays: 60,
  capacity: 1,
  bufferBeforeMinutes: 0,
  bufferAfterMinutes: 0,
  cancelCutoffMinutes: 0,
};

/** name in the import file -> setting, with its allowed range */
export const SETTING_FIELDS: readonly { key: string; prop: keyof ScheduleSettings; min: number; max: number }[] = [
  { key: 'slot_interval_minutes', prop: 'slotIntervalMinutes', min: 1, max: 1440 },
  { key: 'min_notice_minutes', prop: 'minNoticeMinutes', min: 0, max: 525_600 },
  { key: 'horizon_days', prop: 'horizonDays', min: 0, max: 3660 },
  { key: 'capacity', prop: 'capacity', min: 1, max: 10_000 },
  { key: 'buffer_before_minutes', prop: 'bufferBeforeMinutes', min: 0, max: MAX_BUFFER_MINUTES },
  { key: 'buffer_after_minutes', prop: 'bufferAfterMinutes', min: 0, max: MAX_BUFFER_MINUTES },
  // up to a month (docs/manage-link.md)
  { key: 'cancel_cutoff_minutes', prop: 'cancelCutoffMinutes', min: 0, max: 44_640 },
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const describe = (v: unknown) => JSON.stringify(v) ?? String(v);
const isOneOf = <T extends string>(list: readonly T[], v: unknown): v is T => (list as readonly unknown[]).includes(v);

function fail(path: string, reason: string): never {
  throw InvalidInput.at(path, reason);
}

/** A key's path below `at`; the admin area parses one form's fields at the top (''), naming them by key alone. */
const child = (at: string, key: string) => (at === '' ? key : `${at}.${key}`);

/** Control characters are refused (docs/security.md); line breaks only where the text is multi-line. */
function checkText(value: string, path: string, multiLine = false): void {
  const problem = controlCharacterProblem(value, multiLine);
  if (problem) fail(path, problem.replace(/^Must/, 'must'));
}

export function parseName(value: unknown, path: string, max = 200): string {
  if (typeof value !== 'string' || value.trim() === '') fail(path, 'must be a non-empty string');
  if (value.length > max) fail(path, `must be at most ${max} characters`);
  checkText(value, path);
  return value.trim();
}

export function parseInteger(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(path, `must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

/** A list of ['HH:MM', 'HH:MM'] pairs: each end after its start, none overlapping; sorted. */
export function parseIntervals(value: unknown, path: string): Interval[] {
  if (!Array.isArray(value)) fail(path, 'must be a list of ["HH:MM", "HH:MM"] intervals');
  const intervals = value.map((pair, i) => {
    const at = `${path}[${i}]`;
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      fail(at, `must be a pair ["HH:MM", "HH:MM"], got ${describe(pair)}`);
    }
    const start = parseClock(pair[0]);
    const end = parseClock(pair[1], { allow24: true });
    if (start === null) fail(at, `start ${describe(pair[0])} is not a time from 00:00 to 23:59`);
    if (end === null) fail(at, `end ${describe(pair[1])} is not a time from 00:00 to 24:00`);
    if (end <= start) fail(at, `end ${pair[1]} is not after start ${pair[0]}`);
    return { start, end };
  });
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.start < sorted[i - 1]!.end) {
      fail(
        path,
        `intervals ${formatClock(sorted[i - 1]!.start)}-${formatClock(sorted[i - 1]!.end)} and ${formatClock(sorted[i]!.start)}-${formatClock(sorted[i]!.end)} overlap`,
      );
    }
  }
  return sorted;
}

export function parseWeeklyHours(value: unknown, path: string): WeeklyHours {
  if (value === undefined) return {};
  if (!isObject(value)) fail(path, 'must be an object keyed by weekday (mon … sun)');
  const hours: Partial<Record<Weekday, Interval[]>> = {};
  for (const [day, intervals] of Object.entries(value)) {
    if (!isOneOf(WEEKDAYS, day)) fail(path, `unknown weekday ${describe(day)} (use mon … sun)`);
    hours[day] = parseIntervals(intervals, `${path}.${day}`);
  }
  return hours;
}

export function parseExceptions(value: unknown, path: string): DateException[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(path, 'must be a list of {"date": "YYYY-MM-DD", "hours": [...]}');
  const seen = new Set<string>();
  return value.map((item, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(item)) fail(at, 'must be an object {"date", "hours"}');
    if (typeof item.date !== 'string' || parseDate(item.date) === null)
      fail(`${at}.date`, `${describe(item.date)} is not a date YYYY-MM-DD`);
    if (seen.has(item.date)) fail(`${at}.date`, `${item.date} is listed twice`);
    seen.add(item.date);
    return { date: item.date, hours: parseIntervals(item.hours, `${at}.hours`) };
  });
}

export function parseReason(item: unknown, at: string): ReasonDefinition {
  if (!isObject(item)) fail(at, 'must be an object {"name", "description", "duration_minutes"}');
  const description = item.description ?? '';
  if (typeof description !== 'string' || description.length > 2000)
    fail(child(at, 'description'), 'must be a string of at most 2000 characters');
  checkText(description, child(at, 'description'), true);
  return {
    name: parseName(item.name, child(at, 'name')),
    description,
    durationMinutes: parseInteger(item.duration_minutes, child(at, 'duration_minutes'), 1, MAX_DURATION_MINUTES),
  };
}

export function parseFormField(name: string, spec: unknown, at: string): FormField {
  const nameProblem = fieldNameProblem(name);
  if (nameProblem) fail(at, nameProblem);
  if (!isObject(spec)) fail(at, 'must be an object {"label", "input_type", ...}');
  const formType = spec.form_type ?? 'textbox';
  if (!isOneOf(FORM_TYPES, formType)) fail(child(at, 'form_type'), `must be one of ${FORM_TYPES.join(', ')}`);
  const inputType = spec.input_type ?? 'text';
  if (!isOneOf(INPUT_TYPES, inputType)) fail(child(at, 'input_type'), `must be one of ${INPUT_TYPES.join(', ')}`);
  const required = spec.required ?? false;
  if (typeof required !== 'boolean') fail(child(at, 'required'), 'must be true or false');
  let options: string[] = [];
  if (formType === 'select') {
    if (!Array.isArray(spec.options) || spec.options.length === 0 || !spec.options.every((o) => typeof o === 'string' && o !== '')) {
      fail(child(at, 'options'), 'a select needs a non-empty list of non-empty strings');
    }
    (spec.options as string[]).forEach((o, i) => {
      if (o.length > 200) fail(`${child(at, 'options')}[${i}]`, 'must be at most 200 characters');
      checkText(o, `${child(at, 'options')}[${i}]`);
    });
    options = [...new Set(spec.options as string[])];
  } else if (spec.options !== undefined) {
    fail(child(at, 'options'), 'only a select has options');
  }
  const value = spec.value ?? '';
  if (typeof value !== 'string') fail(child(at, 'value'), 'must be a string');
  if (value.length > 1000) fail(child(at, 'value'), 'must be at most 1000 characters');
  checkText(value, child(at, 'value'), formType === 'textarea');
  return { name, label: parseName(spec.label ?? name, child(at, 'label')), formType, inputType, required, options, value };
}

export function parseForm(value: unknown, path: string): FormField[] {
  if (value === undefined) return [...DEFAULT_FORM];
  if (!isObject(value)) fail(path, 'must be an object keyed by field name');
  return Object.entries(value).map(([name, spec]) => parseFormField(name, spec, `${path}.${name}`));
}

export function parseSettings(item: Record<string, unknown>, at: string): ScheduleSettings {
  const settings: { -readonly [K in keyof ScheduleSettings]: number } = { ...DEFAULT_SETTINGS };
  for (const { key, prop, min, max } of SETTING_FIELDS) {
    if (item[key] !== undefined) settings[prop] = parseInteger(item[key], child(at, key), min, max);
  }
  return settings;
}

/** At most this many reminders per schedule, each at most this long before the appointment (a year). */
export const MAX_REMINDERS = 5;
export const MAX_REMINDER_MINUTES = 525_600;

/**
 * `reminder_minutes_before`: a list of whole minutes before the appointment, each 1 to a year, no two the same;
 * omitted, null or empty means no reminders. Sorted largest first (the order they go out).
 */
export function parseReminderMinutes(value: unknown, path: string): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(path, `must be a list of minutes before the appointment, such as [1440, 120], got ${describe(value)}`);
  if (value.length > MAX_REMINDERS) fail(path, `at most ${MAX_REMINDERS} reminders`);
  const minutes = value.map((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_REMINDER_MINUTES)
      fail(`${path}[${i}]`, `must be whole minutes before the appointment, from 1 to ${MAX_REMINDER_MINUTES} (a year), got ${describe(v)}`);
    return v;
  });
  const seen = new Set<number>();
  minutes.forEach((m, i) => {
    if (seen.has(m)) fail(`${path}[${i}]`, `${m} minutes is listed twice`);
    seen.add(m);
  });
  return minutes.sort((a, b) => b - a);
}

const KNOWN_KEYS = new Set([
  'name',
  'weekly_hours',
  'exceptions',
  'reasons',
  'form',
  'reminder_minutes_before',
  ...SETTING_FIELDS.map((f) => f.key),
]);

export function parseScheduleDefinition(item: unknown, at: string): ScheduleDefinition {
  if (!isObject(item)) fail(at, 'must be an object');
  for (const key of Object.keys(item)) if (!KNOWN_KEYS.has(key)) fail(`${at}.${key}`, 'is not a schedule setting');
  const reasons = item.reasons ?? [];
  if (!Array.isArray(reasons)) fail(`${at}.reasons`, 'must be a list');
  return {
    name: parseName(item.name, `${at}.name`),
    settings: parseSettings(item, at),
    weeklyHours: parseWeeklyHours(item.weekly_hours, `${at}.weekly_hours`),
    exceptions: parseExceptions(item.exceptions, `${at}.exceptions`),
    reasons: reasons.map((r, i) => parseReason(r, `${at}.reasons[${i}]`)),
    form: parseForm(item.form, `${at}.form`),
    reminderMinutesBefore: parseReminderMinutes(item.reminder_minutes_before, `${at}.reminder_minutes_before`),
  };
}

/** The whole import file (docs/decisions.md §6): every schedule valid, or an InvalidInput naming the first problem. */
export function parseImportFile(document: unknown): ScheduleDefinition[] {
  if (!isObject(document) || !Array.isArray(document.schedules)) fail('file', 'must be an object {"schedules": [...]}');
  return document.schedules.map((s, i) => parseScheduleDefinition(s, `schedules[${i}]`));
}

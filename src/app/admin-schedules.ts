// Schedules, reasons and booking forms as the admin area edits them. Form text is turned into the
// import file's shape and checked by the same parsers as `booking import`, so both apply one set of rules
// and errors name the field (e.g. "weekly_hours.mon"). Every change bumps the config version.
import type { Kysely } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { bumpConfigVersion } from '../db/repos/installation.repository.js';
import {
  deleteSchedule, insertReason, insertSchedule, loadSchedules, replaceForm, updateReason, updateScheduleHours, updateScheduleSettings,
} from '../db/repos/schedule.repository.js';
import { countFutureBookings } from '../db/repos/booking.repository.js';
import { Conflict, InvalidInput, NotFound } from '../core/errors.js';
import {
  SETTING_FIELDS, parseExceptions, parseFormField, parseName, parseReason, parseSettings, parseWeeklyHours,
} from '../core/schedules/schedule-definition.js';
import type { ReasonDefinition, ScheduleDefinition, StoredSchedule } from '../core/schedules/schedule.js';
import { DEFAULT_FORM, type FormField } from '../core/forms/form-fields.js';
import { WEEKDAYS } from '../core/time/calendar.js';
import { formatClock } from '../core/time/calendar.js';

export type FormInput = Readonly<Record<string, string | string[] | undefined>>;

/** One value of a submitted form (the last one if a name was sent twice). */
export function text(input: FormInput, name: string): string {
  const v = input[name];
  return (Array.isArray(v) ? v[v.length - 1] : v) ?? '';
}

/** The field an InvalidInput from the shared parsers is about, as the admin form names it ("weekly_hours.mon[0]" -> "weekly_hours.mon"). */
export function formFieldOf(error: InvalidInput): string {
  const path = (error.field ?? '').replace(/^schedule\./, '');
  return path.replace(/\[\d+\].*$/, '').replace(/\.(date|hours)$/, '');
}

function integerField(value: string): unknown {
  const t = value.trim();
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

/** "09:00-12:00, 13:00-17:00" -> [["09:00","12:00"],["13:00","17:00"]]; malformed pieces are passed on for the parser to name. */
function intervalsFromText(value: string): unknown[] {
  return value.split(/[,;\n]/).map((p) => p.trim()).filter(Boolean).map((piece) => {
    const m = /^(\S+?)\s*[-–]\s*(\S+)$/.exec(piece);
    return m ? [m[1], m[2]] : piece;
  });
}

export const intervalsToText = (intervals: readonly { start: number; end: number }[]) =>
  intervals.map((i) => `${formatClock(i.start)}-${formatClock(i.end)}`).join(', ');

/** Exceptions, one per line: "2026-12-24 closed" or "2026-12-27 10:00-12:00, 14:00-16:00". */
function exceptionsFromText(value: string): unknown[] {
  return value.split('\n').map((l) => l.trim()).filter(Boolean).map((line) => {
    const [date = '', ...rest] = line.split(/\s+/);
    const hours = rest.join(' ');
    return { date, hours: /^closed$/i.test(hours) || hours === '' ? [] : intervalsFromText(hours) };
  });
}

export const exceptionsToText = (exceptions: StoredSchedule['exceptions']) =>
  exceptions.map((e) => `${e.date} ${e.hours.length ? intervalsToText(e.hours) : 'closed'}`).join('\n');

/** Name, settings, weekly hours and exceptions from the schedule form; throws InvalidInput naming the form field. */
export function parseScheduleForm(input: FormInput): Omit<ScheduleDefinition, 'reasons' | 'form'> {
  const item: Record<string, unknown> = {};
  for (const { key } of SETTING_FIELDS) item[key] = integerField(text(input, key));
  return {
    name: parseName(text(input, 'name'), 'name'),
    settings: parseSettings(item, 'schedule'),
    weeklyHours: parseWeeklyHours(Object.fromEntries(WEEKDAYS.map((d) => [d, intervalsFromText(text(input, `weekly_hours.${d}`))])), 'weekly_hours'),
    exceptions: parseExceptions(exceptionsFromText(text(input, 'exceptions')), 'exceptions'),
  };
}

export function parseReasonForm(input: FormInput): ReasonDefinition {
  return parseReason({ name: text(input, 'name'), description: text(input, 'description'), duration_minutes: integerField(text(input, 'duration_minutes')) }, 'reason')
}

export async function listSchedules(db: Db): Promise<StoredSchedule[]> {
  return loadSchedules(db.kysely);
}

export async function getSchedule(db: Db, id: number): Promise<StoredSchedule> {
  const schedule = (await loadSchedules(db.kysely)).find((s) => s.id === id);
  if (!schedule) throw new NotFound('Schedule not found');
  return schedule;
}

export async function createScheduleFromForm(db: Db, input: FormInput, now: number): Promise<number> {
  const def = parseScheduleForm(input);
  return db.write(async (trx) => {
    const { id } = await insertSchedule(trx, { ...def, reasons: [], form: DEFAULT_FORM }, now);
    await bumpConfigVersion(trx);
    return id;
  });
}

export async function updateScheduleFromForm(db: Db, id: number, input: FormInput): Promise<void> {
  const def = parseScheduleForm(input);
  await db.write(async (trx) => {
    await requireSchedule(trx, id);
    await updateScheduleSettings(trx, id, def.name, def.settings);
    await updateScheduleHours(trx, id, def.weeklyHours, def.exceptions);
    await bumpConfigVersion(trx);
  });
}

async function requireSchedule(trx: Kysely<Database>, id: number): Promise<void> {
  const row = await trx.selectFrom('schedules').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFound('Schedule not found');
}

/** Past and cancelled bookings (and their mail) go with the schedule; future ones block the deletion. */
export async function removeSchedule(db: Db, id: number, now: number): Promise<void> {
  await db.write(async (trx) => {
    await requireSchedule(trx, id);
    const future = await countFutureBookings(trx, id, now);
    if (future > 0) {
      throw new Conflict(`This schedule still has ${future} upcoming booking${future === 1 ? '' : 's'}. Cancel ${future === 1 ? 'it' : 'them'} first.`);
    }
    const bookings = trx.selectFrom('bookings').select('id').where('schedule_id', '=', id);
    await trx.deleteFrom('outbox').where('booking_id', 'in', bookings).execute();
    await trx.deleteFrom('bookings').where('schedule_id', '=', id).execute();
    await deleteSchedule(trx, id);
    await bumpConfigVersion(trx);
  });
}

export async function addReason(db: Db, scheduleId: number, input: FormInput): Promise<number> {
  const reason = parseReasonForm(input);
  return db.write(async (trx) => {
    await requireSchedule(trx, scheduleId);
    const id = await insertReason(trx, scheduleId, reason);
    await bumpConfigVersion(trx);
    return id;
  });
}

async function requireReason(trx: Kysely<Database>, scheduleId: number, reasonId: number): Promise<void> {
  const row = await trx.selectFrom('reasons').select('id').where('id', '=', reasonId).where('schedule_id', '=', scheduleId).executeTakeFirst();
  if (!row) throw new NotFound('Reason not found');
}

export async function editReason(db: Db, scheduleId: number, reasonId: number, input: FormInput): Promise<void> {
  const reason = parseReasonForm(input);
  await db.write(async (trx) => {
    await requireReason(trx, scheduleId, reasonId);
    await updateReason(trx, reasonId, reason);
    await bumpConfigVersion(trx);
  });
}

export async function removeReason(db: Db, scheduleId: number, reasonId: number, now: number): Promise<void> {
  await db.write(async (trx) => {
    await requireReason(trx, scheduleId, reasonId);
    const future = await trx.selectFrom('bookings').select('id').where('reason_id', '=', reasonId)
      .where('status', '=', 'booked').where('end_at', '>', now).execute();
    if (future.length > 0) throw new Conflict(`This reason still has ${future.length} upcoming booking(s). Cancel them first.`);
    const bookings = trx.selectFrom('bookings').select('id').where('reason_id', '=', reasonId);
    await trx.deleteFrom('outbox').where('booking_id', 'in', bookings).execute();
    await trx.deleteFrom('bookings').where('reason_id', '=', reasonId).execute();
    await trx.deleteFrom('reasons').where('id', '=', reasonId).execute();
    await bumpConfigVersion(trx);
  });
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
      row: i, position: Number(get('position')) || i + 1, name: get('name').trim(), label: get('label'), formType: get('form_type'),
      inputType: get('input_type'), required: get('required') === 'on', options: get('options'), remove: get('remove') === 'on',
    });
  }
  return rows;
}

/** Checks the rows with the import file's rules; an InvalidInput's field is "f<row>_<what>". */
export function parseFormRows(rows: readonly FormRowInput[]): FormField[] {
  const kept = rows.filter((r) => !r.remove && r.name !== '')
    .map((r, i) => ({ r, i })).sort((a, b) => a.r.position - b.r.position || a.i - b.i).map(({ r }) => r);
  const seen = new Set<string>();
  return kept.map((r) => {
    if (seen.has(r.name)) throw new InvalidInput(`f${r.row}_name: the field name ${r.name} is used twice`, `f${r.row}_name`);
    seen.add(r.name);
    const options = r.options.split('\n').map((o) => o.trim()).filter(Boolean);
    const spec = {
      label: r.label.trim() === '' ? r.name : r.label, form_type: r.formType, input_type: r.inputType, required: r.required,
      ...(r.formType === 'select' ? { options } : {}),
    };
    try {
      return parseFormField(r.name, spec, `f${r.row}`);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      const what = (error.field ?? '').split('.')[1] ?? 'name';
      throw new InvalidInput(error.message.replace(/^f\d+(\.\w+)?: /, ''), `f${r.row}_${what}`);
    }
  });
}

export async function saveForm(db: Db, scheduleId: number, rows: readonly FormRowInput[]): Promise<void> {
  const form = parseFormRows(rows);
  await db.write(async (trx) => {
    await requireSchedule(trx, scheduleId);
    await replaceForm(trx, scheduleId, form);
    await bumpConfigVersion(trx);
  });
}

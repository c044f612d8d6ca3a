import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type {
  DateException,
  Interval,
  ReasonDefinition,
  ScheduleDefinition,
  ScheduleSettings,
  StoredSchedule,
  WeeklyHours,
} from '../../core/schedules/schedule.js';
import type { FormField } from '../../core/forms/form-fields.js';
import { formatClock, parseClock } from '../../core/time/calendar.js';

type Q = Kysely<Database>;

// Hours are stored the way operators write them: [["09:00", "12:00"], ...]
const intervalsToJson = (intervals: readonly Interval[]) => intervals.map((i) => [formatClock(i.start), formatClock(i.end)]);
const intervalsFromJson = (pairs: [string, string][]): Interval[] =>
  pairs.map(([s, e]) => ({ start: parseClock(s)!, end: parseClock(e, { allow24: true })! }));

function settingsColumns(s: ScheduleSettings) {
  return {
    slot_interval_minutes: s.slotIntervalMinutes,
    min_notice_minutes: s.minNoticeMinutes,
    horizon_days: s.horizonDays,
    capacity: s.capacity,
    buffer_before_minutes: s.bufferBeforeMinutes,
    buffer_after_minutes: s.bufferAfterMinutes,
    cancel_cutoff_minutes: s.cancelCutoffMinutes,
  };
}

function hoursColumns(weeklyHours: WeeklyHours, exceptions: readonly DateException[]) {
  return {
    weekly_hours: JSON.stringify(Object.fromEntries(Object.entries(weeklyHours).map(([d, iv]) => [d, intervalsToJson(iv)]))),
    exceptions: JSON.stringify(exceptions.map((e) => ({ date: e.date, hours: intervalsToJson(e.hours) }))),
  };
}

export async function insertSchedule(
  trx: Q,
  def: ScheduleDefinition,
  now: number,
): Promise<{ id: number; reasons: { id: number; name: string }[] }> {
  const { id } = await trx
    .insertInto('schedules')
    .values({
      name: def.name,
      ...settingsColumns(def.settings),
      ...hoursColumns(def.weeklyHours, def.exceptions),
      reminder_minutes: JSON.stringify(def.reminderMinutesBefore),
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const reasons = [];
  for (const reason of def.reasons) reasons.push({ id: await insertReason(trx, id, reason), name: reason.name });
  await replaceForm(trx, id, def.form);
  return { id, reasons };
}

export async function updateScheduleSettings(trx: Q, id: number, name: string, settings: ScheduleSettings): Promise<void> {
  await trx
    .updateTable('schedules')
    .set({ name, ...settingsColumns(settings) })
    .where('id', '=', id)
    .execute();
}

/** Applies to bookings made afterwards: reminders already queued keep their times (docs/reminders.md). */
export async function updateScheduleReminders(trx: Q, id: number, reminderMinutesBefore: readonly number[]): Promise<void> {
  await trx
    .updateTable('schedules')
    .set({ reminder_minutes: JSON.stringify(reminderMinutesBefore) })
    .where('id', '=', id)
    .execute();
}

export async function updateScheduleHours(
  trx: Q,
  id: number,
  weeklyHours: WeeklyHours,
  exceptions: readonly DateException[],
): Promise<void> {
  await trx.updateTable('schedules').set(hoursColumns(weeklyHours, exceptions)).where('id', '=', id).execute();
}

export async function scheduleExists(db: Q, id: number): Promise<boolean> {
  return (await db.selectFrom('schedules').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function reasonExists(db: Q, scheduleId: number, reasonId: number): Promise<boolean> {
  const row = await db
    .selectFrom('reasons')
    .select('id')
    .where('id', '=', reasonId)
    .where('schedule_id', '=', scheduleId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Retires a schedule or a reason (retiredAt) or brings it back (null). Never a deletion: its bookings, their
 * mail and the customers' histories stay as they are.
 */
export async function setRetired(trx: Q, table: 'schedules' | 'reasons', id: number, retiredAt: number | null): Promise<void> {
  await trx.updateTable(table).set({ retired_at: retiredAt }).where('id', '=', id).execute();
}

export async function insertReason(trx: Q, scheduleId: number, reason: ReasonDefinition): Promise<number> {
  const row = await trx
    .insertInto('reasons')
    .values({ schedule_id: scheduleId, name: reason.name, description: reason.description, duration_minutes: reason.durationMinutes })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateReason(trx: Q, id: number, reason: ReasonDefinition): Promise<void> {
  await trx
    .updateTable('reasons')
    .set({ name: reason.name, description: reason.description, duration_minutes: reason.durationMinutes })
    .where('id', '=', id)
    .execute();
}

export async function replaceForm(trx: Q, scheduleId: number, form: readonly FormField[]): Promise<void> {
  await trx.deleteFrom('form_fields').where('schedule_id', '=', scheduleId).execute();
  if (form.length === 0) return;
  await trx
    .insertInto('form_fields')
    .values(
      form.map((f, position) => ({
        schedule_id: scheduleId,
        position,
        name: f.name,
        label: f.label,
        form_type: f.formType,
        input_type: f.inputType,
        required: f.required ? 1 : 0,
        options: JSON.stringify(f.options),
        default_value: f.value,
      })),
    )
    .execute();
}

/**
 * Every schedule with its reasons and form, by ascending id. By default only what is in service (what the
 * API's cache holds); the admin area asks for the retired ones too.
 */
export async function loadSchedules(db: Q, options: { includeRetired?: boolean } = {}): Promise<StoredSchedule[]> {
  const inService = !options.includeRetired;
  let scheduleQuery = db.selectFrom('schedules').selectAll().orderBy('id');
  let reasonQuery = db.selectFrom('reasons').selectAll().orderBy('id');
  if (inService) {
    scheduleQuery = scheduleQuery.where('retired_at', 'is', null);
    reasonQuery = reasonQuery.where('retired_at', 'is', null);
  }
  const [schedules, reasons, fields] = await Promise.all([
    scheduleQuery.execute(),
    reasonQuery.execute(),
    db.selectFrom('form_fields').selectAll().orderBy('schedule_id').orderBy('position').execute(),
  ]);
  return schedules.map((s) => ({
    id: s.id,
    name: s.name,
    retiredAt: s.retired_at === null ? null : Number(s.retired_at),
    settings: {
      slotIntervalMinutes: s.slot_interval_minutes,
      minNoticeMinutes: s.min_notice_minutes,
      horizonDays: s.horizon_days,
      capacity: s.capacity,
      bufferBeforeMinutes: s.buffer_before_minutes,
      bufferAfterMinutes: s.buffer_after_minutes,
      cancelCutoffMinutes: Number(s.cancel_cutoff_minutes),
    },
    weeklyHours: Object.fromEntries(
      Object.entries(JSON.parse(s.weekly_hours) as Record<string, [string, string][]>).map(([d, pairs]) => [d, intervalsFromJson(pairs)]),
    ),
    exceptions: (JSON.parse(s.exceptions) as { date: string; hours: [string, string][] }[]).map((e) => ({
      date: e.date,
      hours: intervalsFromJson(e.hours),
    })),
    reminderMinutesBefore: JSON.parse(s.reminder_minutes) as number[],
    reasons: reasons
      .filter((r) => r.schedule_id === s.id)
      .map((r) => ({
        id: r.id,
        name: r.name,
        description: r.description,
        durationMinutes: r.duration_minutes,
        retiredAt: r.retired_at === null ? null : Number(r.retired_at),
      })),
    form: fields
      .filter((f) => f.schedule_id === s.id)
      .map((f) => ({
        name: f.name,
        label: f.label,
        formType: f.form_type,
        inputType: f.input_type,
        required: f.required === 1,
        options: JSON.parse(f.options) as string[],
        value: f.default_value,
      })),
  }));
}

// Schedules, reasons and booking forms as the admin area edits them. The inputs arrive typed and checked
// by core's parsers (http/admin/schedule-form.ts turns the forms into them). Every change bumps the config
// version.
import type { Db } from '../db/connect.js';
import { bumpConfigVersion } from '../db/repos/installation.repository.js';
import {
  insertReason,
  insertSchedule,
  loadSchedules,
  reasonExists,
  replaceForm,
  scheduleExists,
  setRetired,
  updateReason,
  updateScheduleHours,
  updateScheduleReminders,
  updateScheduleSettings,
} from '../db/repos/schedule.repository.js';
import { bumpBookingsVersion, countFutureBookings } from '../db/repos/booking.repository.js';
import { Conflict, NotFound } from '../core/errors.js';
import type { ReasonDefinition, ScheduleDefinition, StoredSchedule } from '../core/schedules/schedule.js';
import { DEFAULT_FORM, type FormField } from '../core/forms/form-fields.js';
import type { OnCreated } from './form-tokens.js';

/** What the schedule page edits: a definition without its reasons and form, which have forms of their own. */
export type ScheduleEdit = Omit<ScheduleDefinition, 'reasons' | 'form'>;

/** Every schedule, the retired ones included (the admin area shows them, marked). */
export async function listSchedules(db: Db, options: { includeRetired?: boolean } = { includeRetired: true }): Promise<StoredSchedule[]> {
  return loadSchedules(db.kysely, options);
}

export async function getSchedule(db: Db, id: number): Promise<StoredSchedule> {
  const schedule = (await loadSchedules(db.kysely, { includeRetired: true })).find((s) => s.id === id);
  if (!schedule) throw new NotFound('Schedule not found');
  return schedule;
}

export async function createSchedule(db: Db, def: ScheduleEdit, now: number, onCreated?: OnCreated<number>): Promise<number> {
  return db.write(async (trx) => {
    const { id } = await insertSchedule(trx, { ...def, reasons: [], form: DEFAULT_FORM }, now);
    await bumpConfigVersion(trx);
    await onCreated?.(trx, id);
    return id;
  });
}

export async function updateSchedule(db: Db, id: number, def: ScheduleEdit): Promise<void> {
  await db.write(async (trx) => {
    await requireSchedule(trx, id);
    await updateScheduleSettings(trx, id, def.name, def.settings);
    await updateScheduleHours(trx, id, def.weeklyHours, def.exceptions);
    await updateScheduleReminders(trx, id, def.reminderMinutesBefore);
    await bumpConfigVersion(trx);
  });
}

async function requireSchedule(trx: Db['kysely'], id: number): Promise<void> {
  if (!(await scheduleExists(trx, id))) throw new NotFound('Schedule not found');
}

function upcomingConflict(future: number, what: string): Conflict {
  return new Conflict(
    `This ${what} still has ${future} upcoming booking${future === 1 ? '' : 's'}. Cancel ${future === 1 ? 'it' : 'them'} first (the customer${future === 1 ? ' is' : 's are'} e-mailed), then retire it.`,
  );
}

/**
 * Takes the schedule's lock as a booking does (the bookings-version bump), so a booking racing a retirement
 * either commits first, and is counted as upcoming, or comes after and finds the schedule or reason retired
 * (bookings.ts, createBooking).
 */
async function lockSchedule(trx: Db['kysely'], id: number): Promise<void> {
  if ((await bumpBookingsVersion(trx, id)) === null) throw new NotFound('Schedule not found');
}

/**
 * Retires a schedule: gone from the API and from new bookings, kept in the admin area with every booking
 * (past and cancelled ones stay in the customers' histories). Refused while upcoming bookings exist.
 */
export async function retireSchedule(db: Db, id: number, now: number): Promise<void> {
  await db.write(async (trx) => {
    await lockSchedule(trx, id);
    const future = await countFutureBookings(trx, { scheduleId: id }, now);
    if (future > 0) throw upcomingConflict(future, 'schedule');
    await setRetired(trx, 'schedules', id, now);
    await bumpConfigVersion(trx);
  });
}

/** Puts a retired schedule back in service, as it was. */
export async function restoreSchedule(db: Db, id: number): Promise<void> {
  await db.write(async (trx) => {
    await requireSchedule(trx, id);
    await setRetired(trx, 'schedules', id, null);
    await bumpConfigVersion(trx);
  });
}

export async function addReason(db: Db, scheduleId: number, reason: ReasonDefinition, onCreated?: OnCreated<number>): Promise<number> {
  return db.write(async (trx) => {
    await requireSchedule(trx, scheduleId);
    const id = await insertReason(trx, scheduleId, reason);
    await bumpConfigVersion(trx);
    await onCreated?.(trx, id);
    return id;
  });
}

async function requireReason(trx: Db['kysely'], scheduleId: number, reasonId: number): Promise<void> {
  if (!(await reasonExists(trx, scheduleId, reasonId))) throw new NotFound('Reason not found');
}

export async function editReason(db: Db, scheduleId: number, reasonId: number, reason: ReasonDefinition): Promise<void> {
  await db.write(async (trx) => {
    await requireReason(trx, scheduleId, reasonId);
    await updateReason(trx, reasonId, reason);
    await bumpConfigVersion(trx);
  });
}

/** Retires a reason like a schedule (retireSchedule): its bookings stay. Refused while upcoming bookings exist. */
export async function retireReason(db: Db, scheduleId: number, reasonId: number, now: number): Promise<void> {
  await db.write(async (trx) => {
    await lockSchedule(trx, scheduleId);
    await requireReason(trx, scheduleId, reasonId);
    const future = await countFutureBookings(trx, { reasonId }, now);
    if (future > 0) throw upcomingConflict(future, 'reason');
    await setRetired(trx, 'reasons', reasonId, now);
    await bumpConfigVersion(trx);
  });
}

export async function restoreReason(db: Db, scheduleId: number, reasonId: number): Promise<void> {
  await db.write(async (trx) => {
    await requireReason(trx, scheduleId, reasonId);
    await setRetired(trx, 'reasons', reasonId, null);
    await bumpConfigVersion(trx);
  });
}

export async function saveForm(db: Db, scheduleId: number, form: readonly FormField[]): Promise<void> {
  await db.write(async (trx) => {
    await requireSchedule(trx, scheduleId);
    await replaceForm(trx, scheduleId, form);
    await bumpConfigVersion(trx);
  });
}

// What each role may open: the one route-level guard of the admin area (session-guard.ts calls it before every
// handler). An administrator may open everything; staff only the pages of bookings, the calendar, booking by
// hand and customers, and their own password. Which bookings and customers they see there is the use-cases'
// filter by the staff member's schedules (app/admin-users.ts visibleSchedules): a booking or customer of another
// schedule is "not found". The menu shows only what the role may open (layout.ts).
import type { Session } from '../../app/admin-auth.js';

const STAFF_PATHS: readonly RegExp[] = [
  /^\/admin\/?$/,
  /^\/admin\/bookings(\.csv)?$/,
  // a booking's details and its actions (edit, cancel, and those added later): the booking itself is filtered
  /^\/admin\/bookings\/[A-Za-z0-9_-]+(\/[a-z-]+)?$/,
  /^\/admin\/calendar(\/print)?$/,
  /^\/admin\/customers$/,
  /^\/admin\/customers\/\d+$/,
  /^\/admin\/password$/,
  /^\/admin\/signout$/,
];

/** booking by hand and the old per-schedule calendar address: staff only for their own schedules */
const STAFF_SCHEDULE_PATH = /^\/admin\/schedules\/(\d+)\/(book|calendar)$/;

export type Access = 'allowed' | 'forbidden' | 'not-found';

export function accessTo(session: Pick<Session, 'role' | 'scheduleIds'>, path: string): Access {
  if (session.role === 'administrator') return 'allowed';
  if (STAFF_PATHS.some((p) => p.test(path))) return 'allowed';
  const schedule = STAFF_SCHEDULE_PATH.exec(path);
  if (schedule) return session.scheduleIds.includes(Number(schedule[1])) ? 'allowed' : 'not-found';
  return 'forbidden';
}

/** The menu entries a role sees */
export const mayOpen = (session: Pick<Session, 'role' | 'scheduleIds'>, path: string) => accessTo(session, path) === 'allowed';

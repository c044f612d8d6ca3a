// The audit trail (docs/admin.md "Activity"): who booked, moved, cancelled or edited what, and who managed
// which user. Each event is inserted by recordAudit IN THE TRANSACTION of the change it records, so the trail
// has every committed change and nothing rolled back. On the API's booking path that is one INSERT more in
// the booking's transaction, and nothing outside it.
import type { Db } from '../db/connect.js';
import { TimeZone } from '../core/time/zone.js';
import { formatClock, formatDate } from '../core/time/calendar.js';
import { insertAuditEvent, listBookingAudit, listLatestAudit, type AuditListRow, type AuditRow } from '../db/repos/audit.repository.js';

/** Who made a change: an admin user (with the name shown when they acted), or the API, the customer, the CLI, the system. */
export type Actor = { kind: 'admin'; adminId: number; label: string } | { kind: 'api' | 'customer' | 'cli' | 'system' };

export const API_ACTOR: Actor = { kind: 'api' };
export const CUSTOMER_ACTOR: Actor = { kind: 'customer' };
export const CLI_ACTOR: Actor = { kind: 'cli' };

export type AuditAction =
  | 'booking.created'
  | 'booking.cancelled'
  | 'booking.rescheduled'
  | 'booking.edited'
  | 'booking.completed'
  | 'booking.no_show'
  | 'booking.restored'
  | 'user.invited'
  | 'user.invitation_withdrawn'
  | 'user.joined'
  | 'user.changed'
  | 'user.removed'
  | 'user.signed_in';

/** Records one event in the caller's transaction. */
export async function recordAudit(
  trx: Db['kysely'],
  actor: Actor,
  action: AuditAction,
  bookingId: number | null,
  summary: string,
  now: number,
): Promise<void> {
  await insertAuditEvent(trx, { ...auditEvent(actor, action, summary, now), bookingId });
}

/** An event's row but its booking: for a write that inserts it with the booking it creates (createBooking). */
export function auditEvent(actor: Actor, action: AuditAction, summary: string, now: number): Omit<AuditRow, 'bookingId'> {
  return {
    at: now,
    actorKind: actor.kind,
    actorAdminId: actor.kind === 'admin' ? actor.adminId : null,
    actorLabel: actor.kind === 'admin' ? actor.label : '',
    action,
    summary,
  };
}

export type AuditEntry = AuditListRow;

/** The history of one booking, oldest first. */
export const bookingHistory = (db: Db, bookingId: number): Promise<AuditEntry[]> => listBookingAudit(db.kysely, bookingId);

export const ACTIVITY_LIMIT = 100;

/** The latest events (at most 100), of one admin user when given. */
export const latestActivity = (db: Db, actorAdminId: number | null): Promise<AuditEntry[]> =>
  listLatestAudit(db.kysely, ACTIVITY_LIMIT, actorAdminId);

const VERBS: Record<string, string> = {
  'booking.created': 'Booked',
  'booking.cancelled': 'Cancelled',
  'booking.rescheduled': 'Moved',
  'booking.edited': 'Edited',
  'booking.completed': 'Marked completed',
  'booking.no_show': 'Marked no-show',
  'booking.restored': 'Cancellation undone',
  'user.invited': 'Invited a user',
  'user.invitation_withdrawn': 'Withdrew an invitation',
  'user.joined': 'Joined',
  'user.changed': 'Changed a user',
  'user.removed': 'Removed a user',
  'user.signed_in': 'Signed in',
};

/** "Booked by Sam Staff", "Cancelled by the customer (manage link)", "Booked through the API". */
export function describeEvent(entry: Pick<AuditEntry, 'action' | 'actorKind' | 'actorLabel'>): string {
  const verb = VERBS[entry.action] ?? entry.action;
  // events whose actor is their subject read as "Sam Staff signed in"
  if (entry.actorKind === 'admin' && (entry.action === 'user.signed_in' || entry.action === 'user.joined'))
    return `${entry.actorLabel} ${verb.toLowerCase()}`;
  switch (entry.actorKind) {
    case 'admin':
      return `${verb} by ${entry.actorLabel}`;
    case 'api':
      return `${verb} through the API`;
    case 'customer':
      return `${verb} by the customer (manage link)`;
    case 'cli':
      return `${verb} from the command line`;
    default:
      return `${verb} by the system`;
  }
}

/** "2026-06-01 09:30" in the installation's zone: how a summary names a time. */
export function auditTime(timezone: string, instant: number): string {
  const zone = TimeZone.find(timezone) ?? TimeZone.of('UTC');
  return `${formatDate(zone.localDayOf(instant))} ${formatClock(zone.localMinuteOf(instant))}`;
}

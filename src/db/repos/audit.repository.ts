// The audit trail (app/audit.ts): one row per change, inserted in the transaction of the change.
import type { Kysely } from 'kysely';
import type { AuditActorKind, Database } from '../schema.js';

type Q = Kysely<Database>;

export interface AuditRow {
  at: number;
  actorKind: AuditActorKind;
  actorAdminId: number | null;
  actorLabel: string;
  action: string;
  bookingId: number | null;
  summary: string;
}

export interface AuditListRow extends AuditRow {
  id: number;
  /** the booking's reference, for a link (null: no booking, or it is gone) */
  detailsId: string | null;
}

export async function insertAuditEvent(trx: Q, row: AuditRow): Promise<void> {
  await trx
    .insertInto('audit_events')
    .values({
      at: row.at,
      actor_kind: row.actorKind,
      actor_admin_id: row.actorAdminId,
      actor_label: row.actorLabel,
      action: row.action,
      booking_id: row.bookingId,
      summary: row.summary,
    })
    .execute();
}

function listQuery(db: Q) {
  return db
    .selectFrom('audit_events')
    .leftJoin('bookings', 'bookings.id', 'audit_events.booking_id')
    .select([
      'audit_events.id',
      'audit_events.at',
      'audit_events.actor_kind',
      'audit_events.actor_admin_id',
      'audit_events.actor_label',
      'audit_events.action',
      'audit_events.booking_id',
      'audit_events.summary',
      'bookings.details_id',
    ]);
}

type Raw = Awaited<ReturnType<ReturnType<typeof listQuery>['execute']>>[number];

const rowOf = (r: Raw): AuditListRow => ({
  id: Number(r.id),
  at: Number(r.at),
  actorKind: r.actor_kind,
  actorAdminId: r.actor_admin_id === null ? null : Number(r.actor_admin_id),
  actorLabel: r.actor_label,
  action: r.action,
  bookingId: r.booking_id === null ? null : Number(r.booking_id),
  summary: r.summary,
  detailsId: r.details_id ?? null,
});

/** A booking's history, oldest first. */
export async function listBookingAudit(db: Q, bookingId: number): Promise<AuditListRow[]> {
  return (await listQuery(db).where('audit_events.booking_id', '=', bookingId).orderBy('audit_events.id').execute()).map(rowOf);
}

/** The latest events, newest first; of one admin user when `actorAdminId` is given. */
export async function listLatestAudit(db: Q, limit: number, actorAdminId: number | null): Promise<AuditListRow[]> {
  let q = listQuery(db);
  if (actorAdminId !== null) q = q.where('audit_events.actor_admin_id', '=', actorAdminId);
  return (await q.orderBy('audit_events.id', 'desc').limit(limit).execute()).map(rowOf);
}

// Admin users (roles, schedules) and their invitations (app/admin-users.ts decides what they mean).
import type { Kysely } from 'kysely';
import type { AdminRole, Database } from '../schema.js';

type Q = Kysely<Database>;

export interface AdminUserRow {
  id: number;
  email: string;
  name: string;
  role: AdminRole;
  scheduleIds: number[];
  createdAt: number;
  lastSignInAt: number | null;
}

const idsOf = (json: string): number[] => (JSON.parse(json) as unknown[]).filter((v): v is number => Number.isInteger(v));

const USER_COLUMNS = ['id', 'email', 'name', 'role', 'schedule_ids', 'created_at', 'last_sign_in_at'] as const;

function userOf(row: {
  id: number;
  email: string;
  name: string;
  role: AdminRole;
  schedule_ids: string;
  created_at: number | string;
  last_sign_in_at: number | string | null;
}): AdminUserRow {
  return {
    id: Number(row.id),
    email: row.email,
    name: row.name,
    role: row.role,
    scheduleIds: idsOf(row.schedule_ids),
    createdAt: Number(row.created_at),
    lastSignInAt: row.last_sign_in_at === null ? null : Number(row.last_sign_in_at),
  };
}

export async function listAdminUsers(db: Q): Promise<AdminUserRow[]> {
  return (await db.selectFrom('admins').select(USER_COLUMNS).orderBy('email').execute()).map(userOf);
}

export async function findAdminUser(db: Q, id: number): Promise<AdminUserRow | null> {
  const row = await db.selectFrom('admins').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? userOf(row) : null;
}

export async function insertAdminUser(
  trx: Q,
  user: { email: string; name: string; passwordHash: string; role: AdminRole; scheduleIds: readonly number[] },
  now: number,
): Promise<number> {
  const row = await trx
    .insertInto('admins')
    .values({
      email: user.email,
      name: user.name,
      password_hash: user.passwordHash,
      role: user.role,
      schedule_ids: JSON.stringify(user.scheduleIds),
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function updateAdminRole(trx: Q, id: number, role: AdminRole, scheduleIds: readonly number[]): Promise<boolean> {
  const result = await trx
    .updateTable('admins')
    .set({ role, schedule_ids: JSON.stringify(scheduleIds) })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteAdminUser(trx: Q, id: number): Promise<boolean> {
  // the sessions go with it (ON DELETE CASCADE, and explicitly for SQLite connections without foreign keys)
  await trx.deleteFrom('admin_sessions').where('admin_id', '=', id).execute();
  const result = await trx.deleteFrom('admins').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * The administrators, their rows locked until the transaction ends (PostgreSQL; SQLite's write lock is held
 * already), so two demotions at once cannot each see the other administrator and leave none.
 */
export async function lockAdministrators(trx: Q): Promise<number[]> {
  // an UPDATE that changes nothing takes the rows' locks on PostgreSQL (as the bookings version bump does)
  const rows = await trx
    .updateTable('admins')
    .set((eb) => ({ role: eb.ref('role') }))
    .where('role', '=', 'administrator')
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

export async function setLastSignIn(trx: Q, id: number, now: number): Promise<void> {
  await trx.updateTable('admins').set({ last_sign_in_at: now }).where('id', '=', id).execute();
}

export async function adminEmailTaken(db: Q, email: string): Promise<boolean> {
  return (await db.selectFrom('admins').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;
}

export interface InvitationRow {
  id: number;
  email: string;
  role: AdminRole;
  scheduleIds: number[];
  expiresAt: number;
  usedAt: number | null;
}

export async function insertInvitation(
  trx: Q,
  invitation: { tokenHash: string; email: string; role: AdminRole; scheduleIds: readonly number[]; invitedBy: number | null },
  now: number,
  expiresAt: number,
): Promise<void> {
  await trx
    .insertInto('admin_invitations')
    .values({
      token_hash: invitation.tokenHash,
      email: invitation.email,
      role: invitation.role,
      schedule_ids: JSON.stringify(invitation.scheduleIds),
      invited_by: invitation.invitedBy,
      created_at: now,
      expires_at: expiresAt,
    })
    .execute();
}

export async function findInvitation(db: Q, tokenHash: string): Promise<InvitationRow | null> {
  const row = await db
    .selectFrom('admin_invitations')
    .select(['id', 'email', 'role', 'schedule_ids', 'expires_at', 'used_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row
    ? {
        id: Number(row.id),
        email: row.email,
        role: row.role,
        scheduleIds: idsOf(row.schedule_ids),
        expiresAt: Number(row.expires_at),
        usedAt: row.used_at === null ? null : Number(row.used_at),
      }
    : null;
}

/** Marks the invitation used; false when it was used (or expired) meanwhile: a link works once. */
export async function useInvitation(trx: Q, id: number, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('admin_invitations')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Invitations not used and not expired (the Users page lists them). */
export async function listOpenInvitations(db: Q, now: number) {
  const rows = await db
    .selectFrom('admin_invitations')
    .select(['id', 'email', 'role', 'expires_at'])
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), email: r.email, role: r.role, expiresAt: Number(r.expires_at) }));
}

/**
 * Withdraws the open invitations (not used) for an address, or issued by a user (`invitedBy`): their links
 * stop working at once. Returns the addresses they were for.
 */
export async function withdrawOpenInvitations(trx: Q, of: { email: string } | { invitedBy: number } | { id: number }): Promise<string[]> {
  const rows = await trx
    .deleteFrom('admin_invitations')
    .where('used_at', 'is', null)
    .$if('email' in of, (q) => q.where('email', '=', (of as { email: string }).email))
    .$if('invitedBy' in of, (q) => q.where('invited_by', '=', (of as { invitedBy: number }).invitedBy))
    .$if('id' in of, (q) => q.where('id', '=', (of as { id: number }).id))
    .returning('email')
    .execute();
  return rows.map((r) => r.email);
}

/** Keeps the table to what can still matter: used or expired invitations older than `before` go. */
export async function deleteOldInvitations(trx: Q, before: number): Promise<void> {
  await trx.deleteFrom('admin_invitations').where('expires_at', '<', before).execute();
}

// Server-side admin sessions (src/app/admin-auth.ts decides what they mean). A row is one signed-in
// browser, keyed by the hash of its session id.
import type { Kysely } from 'kysely';
import type { AdminRole, Database } from '../schema.js';

type Q = Kysely<Database>;

export interface SessionRow {
  admin_id: number;
  email: string;
  name: string;
  role: AdminRole;
  /** JSON list of schedule ids */
  schedule_ids: string;
  last_seen_at: number;
  expires_at: number;
}

export async function insertAdminSession(db: Q, idHash: string, adminId: number, now: number, expiresAt: number): Promise<void> {
  await db
    .insertInto('admin_sessions')
    .values({ id_hash: idHash, admin_id: adminId, created_at: now, last_seen_at: now, expires_at: expiresAt })
    .execute();
}

/** The session and its admin's e-mail: one primary-key read (joined to the admin by its primary key). */
export async function findAdminSession(db: Q, idHash: string): Promise<SessionRow | undefined> {
  const row = await db
    .selectFrom('admin_sessions')
    .innerJoin('admins', 'admins.id', 'admin_sessions.admin_id')
    .select([
      'admin_sessions.admin_id',
      'admins.email',
      'admins.name',
      'admins.role',
      'admins.schedule_ids',
      'admin_sessions.last_seen_at',
      'admin_sessions.expires_at',
    ])
    .where('admin_sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  return (
    row && {
      ...row,
      admin_id: Number(row.admin_id),
      last_seen_at: Number(row.last_seen_at),
      expires_at: Number(row.expires_at),
    }
  );
}

export async function touchAdminSession(db: Q, idHash: string, now: number): Promise<void> {
  await db.updateTable('admin_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
}

export async function deleteAdminSession(db: Q, idHash: string): Promise<void> {
  await db.deleteFrom('admin_sessions').where('id_hash', '=', idHash).execute();
}

/** Every session of one admin (password change, admin reset); returns how many ended. */
export async function deleteAdminSessionsOf(db: Q, adminId: number): Promise<number> {
  const result = await db.deleteFrom('admin_sessions').where('admin_id', '=', adminId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sessions past their absolute expiry or idle since `idleBefore` (checked anyway on use; this keeps the table small). */
export async function deleteStaleAdminSessions(db: Q, now: number, idleBefore: number): Promise<void> {
  await db
    .deleteFrom('admin_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleBefore)]))
    .execute();
}

type UnshownColumn = 'unshown_api_token' | 'unshown_invitation';

/** Holds a newly generated API token (or invitation link) on the session row until the page that shows it once is opened. */
export async function holdUnshownToken(trx: Q, idHash: string, token: string, column: UnshownColumn = 'unshown_api_token'): Promise<void> {
  await trx
    .updateTable('admin_sessions')
    .set({ [column]: token })
    .where('id_hash', '=', idHash)
    .execute();
}

/** The token held on the session row, cleared in the same transaction: null once it has been taken. */
export async function takeUnshownTokenRow(trx: Q, idHash: string, column: UnshownColumn = 'unshown_api_token'): Promise<string | null> {
  const row = await trx.selectFrom('admin_sessions').select(column).where('id_hash', '=', idHash).executeTakeFirst();
  const token = row?.[column];
  if (!token) return null;
  await trx
    .updateTable('admin_sessions')
    .set({ [column]: null })
    .where('id_hash', '=', idHash)
    .execute();
  return token;
}

// Failed admin sign-ins in the database, shared by every instance (src/app/admin-auth.ts decides what
// they mean). A row is one failure (or an attempt still being checked) of one key at one instant.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Q = Kysely<Database>;

/** Adds one row per key at `at`; returns their ids. */
export async function recordSignInAttempt(db: Q, keys: readonly string[], at: number): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await db
    .insertInto('sign_in_failures')
    .values(keys.map((key) => ({ key, failed_at: at })))
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/** The newest `limit` instants of `key` after `since`, newest first, not counting the rows `except`. */
export async function recentSignInFailures(db: Q, key: string, since: number, limit: number, except: readonly number[]): Promise<number[]> {
  let query = db
    .selectFrom('sign_in_failures')
    .select('failed_at')
    .where('key', '=', key)
    .where('failed_at', '>', since)
    .orderBy('failed_at', 'desc')
    .limit(limit);
  if (except.length) query = query.where('id', 'not in', except);
  return (await query.execute()).map((r) => Number(r.failed_at));
}

export async function deleteSignInRows(db: Q, ids: readonly number[]): Promise<void> {
  if (ids.length) await db.deleteFrom('sign_in_failures').where('id', 'in', ids).execute();
}

export async function clearSignInFailures(db: Q, keys: readonly string[]): Promise<void> {
  if (keys.length) await db.deleteFrom('sign_in_failures').where('key', 'in', keys).execute();
}

/** Deletes every row at or before `before` (older than any window that still counts them). */
export async function expireSignInFailures(db: Q, before: number): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('failed_at', '<=', before).execute();
}

/** Deletes every row whose key starts with one of `prefixes` (all the (account, address) pairs of one account). */
export async function clearSignInFailuresByPrefix(db: Q, prefixes: readonly string[]): Promise<void> {
  for (const prefix of prefixes) {
    if (/[%_\\]/.test(prefix)) throw new Error('a sign-in key prefix must not contain LIKE wildcards');
    await db.deleteFrom('sign_in_failures').where('key', 'like', `${prefix}%`).execute();
  }
}

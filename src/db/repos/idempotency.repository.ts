// Idempotency keys of POST /bookings (src/app/idempotency.ts decides what they mean).
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Q = Kysely<Database>;

export interface IdempotencyRow {
  claim: string;
  request_hash: string;
  status: number | null;
  body: string | null;
  started_at: number;
  expires_at: number;
}

/** Claims a key that has no row yet; false when another request holds it (or held it). */
export async function insertPendingKey(
  db: Q,
  key: string,
  claim: string,
  requestHash: string,
  now: number,
  expiresAt: number,
): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({ key, claim, request_hash: requestHash, status: null, body: null, started_at: now, expires_at: expiresAt })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findKey(db: Q, key: string): Promise<IdempotencyRow | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['claim', 'request_hash', 'status', 'body', 'started_at', 'expires_at'])
    .where('key', '=', key)
    .executeTakeFirst();
  return (
    row && {
      ...row,
      status: row.status === null ? null : Number(row.status),
      started_at: Number(row.started_at),
      expires_at: Number(row.expires_at),
    }
  );
}

/**
 * Takes over a key whose row is expired or whose claim was abandoned, as seen in `seen`: only if the row is
 * still that one (compare and set on its claim), so of several requests taking over at once one wins.
 */
export async function reclaimKey(
  db: Q,
  key: string,
  seenClaim: string,
  claim: string,
  requestHash: string,
  now: number,
  expiresAt: number,
  abandonedBefore: number,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ claim, request_hash: requestHash, status: null, body: null, started_at: now, expires_at: expiresAt })
    .where('key', '=', key)
    .where('claim', '=', seenClaim)
    // the condition that made the caller take it over, checked again in the write: an owner that recorded
    // its answer between the caller's read and this update keeps it
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb.and([eb('status', 'is', null), eb('started_at', '<=', abandonedBefore)])]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the answer of the request that claimed the key (`claim`); false when the claim is no longer its own. */
export async function completeKey(db: Q, key: string, claim: string, status: number, body: string): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ status, body })
    .where('key', '=', key)
    .where('claim', '=', claim)
    .where('status', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives up a claim without an answer (the request failed in a way a retry may not): the next request owns the key. */
export async function releaseKey(db: Q, key: string, claim: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('key', '=', key).where('claim', '=', claim).where('status', 'is', null).execute();
}

export async function deleteExpiredKeys(db: Q, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

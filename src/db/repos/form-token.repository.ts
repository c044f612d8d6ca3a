// One-time form tokens already used (app/form-tokens.ts): a row per creating form submitted, kept a day.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Q = Kysely<Database>;

/** The outcome recorded for a used token ('' when none was), or null when the token was not used. */
export async function findUsedFormToken(db: Q, token: string): Promise<string | null> {
  const row = await db.selectFrom('used_form_tokens').select('outcome').where('token', '=', token).executeTakeFirst();
  return row ? (row.outcome ?? '') : null;
}

/**
 * Records the token as used, in the caller's transaction; false when it already was (a concurrent
 * submission waits on the primary key, then finds it). Rows older than `purgeBefore` go at the same time.
 */
export async function recordFormToken(trx: Q, token: string, now: number, outcome: string, purgeBefore: number): Promise<boolean> {
  await trx.deleteFrom('used_form_tokens').where('used_at', '<', purgeBefore).execute();
  const result = await trx
    .insertInto('used_form_tokens')
    .values({ token, used_at: now, outcome })
    .onConflict((oc) => oc.column('token').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

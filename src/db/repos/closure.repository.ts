import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Q = Kysely<Database>;

/** A practice-wide closure: local dates 'YYYY-MM-DD', first to last inclusive. */
export interface Closure {
  id: number;
  firstDay: string;
  lastDay: string;
  label: string;
  createdAt: number;
}

/** Every closure, by first day. */
export async function loadClosures(db: Q): Promise<Closure[]> {
  const rows = await db.selectFrom('closures').selectAll().orderBy('first_day').orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, firstDay: r.first_day, lastDay: r.last_day, label: r.label, createdAt: Number(r.created_at) }));
}

export async function insertClosure(trx: Q, c: Omit<Closure, 'id'>): Promise<number> {
  const row = await trx
    .insertInto('closures')
    .values({ first_day: c.firstDay, last_day: c.lastDay, label: c.label, created_at: c.createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** false when there was no such closure */
export async function deleteClosure(trx: Q, id: number): Promise<boolean> {
  const result = await trx.deleteFrom('closures').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

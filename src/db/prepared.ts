// Named prepared statements on PostgreSQL for the statements that are planned most often per second: the
// per-request reads (hot-reads.ts, which names its own) and a booking's statements, marked here. PostgreSQL
// plans a named statement once per connection; the booking's one large statement (customer, booking,
// outbox, audit) cost more to plan than to run (issue 13: one schedule's bookings 425 -> 574 req/s,
// 50 schedules' 993 -> 1,472, in one run on the benchmark machine). Off with DATABASE_PREPARED_STATEMENTS=off
// (a PgBouncer in transaction mode that does not track them, docs/operations.md): the mark is then a comment.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';

const MARK = '/* prepared */ ';

/** Put first in a statement's SQL (sql`${PREPARED}with …`) to have it run as a named prepared statement. */
export const PREPARED = sql.raw(MARK);

/**
 * Every marked text gets a name of its own (a marked statement has a few variants, e.g. whether the customer's
 * details are updated). More than this many distinct marked texts would be a statement built with a varying
 * text by mistake: those run unnamed rather than fill every session with plans.
 */
const MAX_NAMED = 64;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `booking_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** Makes `client` run the marked statements it is given (as Kysely gives them: text and values) as named ones. */
export function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: pg.QueryConfig, values?: unknown, callback?: unknown) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' && text.startsWith(MARK) && Array.isArray(values) ? nameOf(text) : undefined;
    if (name === undefined) return query(text as pg.QueryConfig, values, callback);
    return callback === undefined
      ? query({ name, text: text as string, values: values as unknown[] })
      : query({ name, text: text as string, values: values as unknown[] }, callback);
  }) as typeof client.query;
}

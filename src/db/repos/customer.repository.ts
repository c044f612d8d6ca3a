import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Q = Kysely<Database>;

export interface CustomerDetails {
  email: string | null;
  firstName: string;
  lastName: string;
  phone: string;
}

/**
 * The customer with this e-mail address (case-insensitive), its details updated with what was given,
 * or a new one. One statement, so two bookings racing with the same new address share one record.
 */
export async function saveCustomer(trx: Q, details: CustomerDetails, now: number): Promise<number> {
  const values = {
    email_key: details.email?.toLowerCase() ?? null, email: details.email, first_name: details.firstName,
    last_name: details.lastName, phone: details.phone, created_at: now, updated_at: now,
  };
  if (values.email_key === null) {
    return (await trx.insertInto('customers').values(values).returning('id').executeTakeFirstOrThrow()).id;
  }
  // an empty value in this booking keeps what we knew
  const keep = (column: 'first_name' | 'last_name' | 'phone') =>
    sql<string>`case when excluded.${sql.ref(column)} <> '' then excluded.${sql.ref(column)} else customers.${sql.ref(column)} end`;
  const row = await trx.insertInto('customers').values(values)
    .onConflict((oc) => oc.column('email_key').doUpdateSet({
      email: sql`excluded.email`, first_name: keep('first_name'), last_name: keep('last_name'), phone: keep('phone'), updated_at: now,
    }))
    .returning('id').executeTakeFirstOrThrow();
  return row.id;
}

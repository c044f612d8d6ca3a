import type { ColumnDefinitionBuilder } from 'kysely';
import type { DialectName } from '../connect.js';

/** The two engines differ only in how an identity column and a 64-bit integer (an instant in ms) are spelled. */
export function columnTypes(dialect: DialectName) {
  return {
    id: dialect === 'postgres' ? 'serial' : 'integer',
    instant: dialect === 'postgres' ? 'bigint' : 'integer',
    idColumn: (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()),
  } as const;
}

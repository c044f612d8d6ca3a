import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

export function initial(dialect: DialectName) {
  const { id, instant, idColumn } = columnTypes(dialect);

  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('meta')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('config_version', 'integer', (c) => c.notNull())
        .execute();
      await db.insertInto('meta').values({ id: 1, config_version: 1 }).execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('admins')
        .addColumn('id', id, idColumn)
        .addColumn('email', 'varchar(254)', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', instant, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('schedules')
        .addColumn('id', id, idColumn)
        .addColumn('name', 'varchar(200)', (c) => c.notNull())
        .addColumn('slot_interval_minutes', 'integer', (c) => c.notNull())
        .addColumn('min_notice_minutes', 'integer', (c) => c.notNull())
        .addColumn('horizon_days', 'integer', (c) => c.notNull())
        .addColumn('capacity', 'integer', (c) => c.notNull())
        .addColumn('buffer_before_minutes', 'integer', (c) => c.notNull())
        .addColumn('buffer_after_minutes', 'integer', (c) => c.notNull())
        .addColumn('weekly_hours', 'text', (c) => c.notNull())
        .addColumn('exceptions', 'text', (c) => c.notNull())
        .addColumn('created_at', instant, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('reasons')
        .addColumn('id', id, idColumn)
        .addColumn('schedule_id', 'integer', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
        .addColumn('name', 'varchar(200)', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('duration_minutes', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reasons_schedule').on('reasons').column('schedule_id').execute();

      await db.schema
        .createTable('form_fields')
        .addColumn('id', id, idColumn)
        .addColumn('schedule_id', 'integer', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('name', 'varchar(64)', (c) => c.notNull())
        .addColumn('label', 'varchar(200)', (c) => c.notNull())
        .addColumn('form_type', 'varchar(20)', (c) => c.notNull())
        .addColumn('input_type', 'varchar(20)', (c) => c.notNull())
        .addColumn('required', 'integer', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('default_value', 'text', (c) => c.notNull())
        .addUniqueConstraint('form_fields_schedule_name', ['schedule_id', 'name'])
        .execute();

      await db.schema
        .createTable('customers')
        .addColumn('id', id, idColumn)
        .addColumn('email_key', 'varchar(254)', (c) => c.unique())
        .addColumn('email', 'varchar(254)')
        .addColumn('first_name', 'varchar(1000)', (c) => c.notNull())
        .addColumn('last_name', 'varchar(1000)', (c) => c.notNull())
        .addColumn('phone', 'varchar(1000)', (c) => c.notNull())
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('updated_at', instant, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('bookings')
        .addColumn('id', id, idColumn)
        .addColumn('details_id', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('schedule_id', 'integer', (c) => c.notNull().references('schedules.id'))
        .addColumn('reason_id', 'integer', (c) => c.notNull().references('reasons.id'))
        .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
        .addColumn('start_at', instant, (c) => c.notNull())
        .addColumn('end_at', instant, (c) => c.notNull())
        .addColumn('status', 'varchar(20)', (c) => c.notNull())
        .addColumn('source', 'varchar(20)', (c) => c.notNull())
        .addColumn('answers', 'text', (c) => c.notNull())
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('cancelled_at', instant)
        .execute();
      // the free-time engine reads one schedule's bookings by a range of starts
      await db.schema.createIndex('bookings_schedule_start').on('bookings').columns(['schedule_id', 'start_at']).execute();
      await db.schema.createIndex('bookings_customer').on('bookings').column('customer_id').execute();

      await db.schema
        .createTable('outbox')
        .addColumn('id', id, idColumn)
        .addColumn('booking_id', 'integer', (c) => c.references('bookings.id'))
        .addColumn('kind', 'varchar(40)', (c) => c.notNull())
        .addColumn('recipient', 'varchar(254)', (c) => c.notNull())
        .addColumn('state', 'varchar(20)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', instant, (c) => c.notNull())
        .addColumn('claimed_until', instant)
        .addColumn('last_error', 'text')
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('sent_at', instant)
        .execute();
      await db.schema.createIndex('outbox_due').on('outbox').columns(['state', 'next_attempt_at']).execute();
      await db.schema.createIndex('outbox_booking').on('outbox').column('booking_id').execute();
    },
  };
}

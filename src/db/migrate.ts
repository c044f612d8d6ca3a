import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './connect.js';
import { initial } from './migrations/001-initial.js';
import { bookingsVersion } from './migrations/002-bookings-version.js';
import { bookedSpanIndex } from './migrations/003-booked-span-index.js';
import { signInFailures } from './migrations/004-sign-in-failures.js';
import { adminSessions } from './migrations/005-admin-sessions.js';
import { idempotencyKeys } from './migrations/006-idempotency-keys.js';
import { adminSafety } from './migrations/007-admin-safety.js';
import { webhooks } from './migrations/008-webhooks.js';
import { bookingChanges } from './migrations/009-booking-changes.js';
import { reminders } from './migrations/010-reminders.js';
import { manageLink } from './migrations/011-manage-link.js';
import { findAndClosures } from './migrations/012-find-and-closures.js';
import { customerRecords } from './migrations/013-customer-records.js';
import { bookingAttendance } from './migrations/014-booking-attendance.js';
import { adminUsers } from './migrations/015-admin-users.js';
import { bookingUnchanged } from './migrations/016-booking-unchanged.js';

function migrationsFor(db: Db): Record<string, Migration> {
  return {
    '001-initial': initial(db.dialect),
    '002-bookings-version': bookingsVersion(),
    '003-booked-span-index': bookedSpanIndex(),
    '004-sign-in-failures': signInFailures(db.dialect),
    '005-admin-sessions': adminSessions(db.dialect),
    '006-idempotency-keys': idempotencyKeys(db.dialect),
    '007-admin-safety': adminSafety(db.dialect),
    '008-webhooks': webhooks(db.dialect),
    '009-booking-changes': bookingChanges(),
    '010-reminders': reminders(),
    '011-manage-link': manageLink(db.dialect),
    '012-find-and-closures': findAndClosures(db.dialect),
    '013-customer-records': customerRecords(db.dialect),
    '014-booking-attendance': bookingAttendance(db.dialect),
    '015-admin-users': adminUsers(db.dialect),
    '016-booking-unchanged': bookingUnchanged(db.dialect),
  };
}

/** Brings the schema up to date; throws (and so exits non-zero) when a migration fails. */
export async function migrate(db: Db): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  const migrator = new Migrator({ db: db.kysely, provider });
  // a read first, so the usual case (nothing to do) takes no write lock next to a running server
  const known = await migrator.getMigrations();
  if (known.every((m) => m.executedAt !== undefined)) return;
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
  }
}

import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { settingsFromRows, type InstallationSettings, type SettingKey } from '../../core/settings.js';

type Q = Kysely<Database>;

export async function configVersion(db: Q): Promise<number> {
  const row = await db.selectFrom('meta').select('config_version').where('id', '=', 1).executeTakeFirstOrThrow();
  return Number(row.config_version);
}

/** Every cached reader (in this process and others) reloads on its next request. Call inside the writing transaction. */
export async function bumpConfigVersion(trx: Q): Promise<void> {
  await trx
    .updateTable('meta')
    .set((eb) => ({ config_version: eb('config_version', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}

export async function loadSettings(db: Q): Promise<InstallationSettings> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).execute();
  return settingsFromRows(rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown })));
}

export async function saveSetting(trx: Q, key: SettingKey, value: unknown): Promise<void> {
  const text = JSON.stringify(value);
  await trx
    .insertInto('settings')
    .values({ key, value: text })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: text }))
    .execute();
}

/** The stored value of `key`; when there is none, `value` is stored first (the first writer of all instances wins). */
export async function findOrCreateSetting(db: Q, key: string, value: unknown): Promise<unknown> {
  await db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return JSON.parse(row.value);
}

export async function upsertAdmin(trx: Q, email: string, passwordHash: string, now: number): Promise<number> {
  const row = await trx
    .insertInto('admins')
    // the admin of setup (and of the demo) is an administrator
    .values({ email, password_hash: passwordHash, created_at: now, role: 'administrator' })
    .onConflict((oc) => oc.column('email').doUpdateSet({ password_hash: passwordHash, role: 'administrator' }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function findAdminById(db: Q, id: number) {
  return db.selectFrom('admins').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setAdminPassword(trx: Q, id: number, passwordHash: string): Promise<void> {
  await trx.updateTable('admins').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

export async function findAdminByEmail(db: Q, email: string) {
  return db.selectFrom('admins').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function listAdmins(db: Q) {
  return db.selectFrom('admins').select(['id', 'email']).orderBy('id').execute();
}

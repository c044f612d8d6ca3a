// Creating and changing schedules. Every change bumps the config version in its own transaction,
// so every process sees it on its next request.
import type { Db } from '../db/connect.js';
import { bumpConfigVersion } from '../db/repos/installation.repository.js';
import { insertSchedule } from '../db/repos/schedule.repository.js';
import { parseImportFile } from '../core/schedules/schedule-definition.js';
import type { ScheduleDefinition } from '../core/schedules/schedule.js';

export interface ImportedSchedule {
  id: number;
  name: string;
  reasons: { id: number; name: string }[];
}

/** Adds every schedule of an import document, all or nothing (docs/decisions.md §6). */
export async function importSchedules(db: Db, document: unknown, now: number): Promise<{ schedules: ImportedSchedule[] }> {
  const definitions = parseImportFile(document);
  return { schedules: await createSchedules(db, definitions, now) };
}

export async function createSchedules(db: Db, definitions: readonly ScheduleDefinition[], now: number): Promise<ImportedSchedule[]> {
  return db.write(async (trx) => {
    const created: ImportedSchedule[] = [];
    for (const def of definitions) {
      const { id, reasons } = await insertSchedule(trx, def, now);
      created.push({ id, name: def.name, reasons });
    }
    await bumpConfigVersion(trx);
    return created;
  });
}

// The layer rule of eslint.config.js, probed: code placed in each layer at several folder depths, crossing
// (or not) into another. A rule that silently stopped matching would let the layers decay unnoticed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
// the probes are not files of the TypeScript project, so the type-aware rules are switched off for them
const eslint = new ESLint({ cwd: root, overrideConfig: [tseslint.configs.disableTypeChecked] });

/** The layer-related messages ESLint gives `code` as if it stood at `path` (relative to the project root). */
async function problems(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` });
  return result!.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

const crossings: [string, string][] = [
  ['src/core/probe.ts', "import { connect } from '../db/connect.js';\nconnect('');"],
  ['src/core/time/probe.ts', "import { buildApp } from '../../http/build-app.js';\nvoid buildApp;"],
  ['src/db/repos/probe.ts', "import { createBooking } from '../../app/bookings.js';\nvoid createBooking;"],
  ['src/mail/probe.ts', "import type { Db } from '../db/connect.js';\nexport type X = Db;"],
  ['src/rate-limit/probe.ts', "import { findSchedule } from '../app/availability.js';\nvoid findSchedule;"],
  ['src/app/probe.ts', "import { errorHandler } from '../http/errors.js';\nvoid errorHandler;"],
  ['src/http/admin/probe.ts', "import { loadSchedules } from '../../db/repos/schedule.repository.js';\nvoid loadSchedules;"],
  ['src/http/api/probe.ts', "import { connect } from '../../db/connect.js';\nvoid connect;"],
  ['src/app/probe.ts', "import { sql } from 'kysely';\nvoid sql;"],
  ['src/app/probe.ts', "import nodemailer from 'nodemailer';\nvoid nodemailer;"],
  ['src/core/probe.ts', "import Fastify from 'fastify';\nvoid Fastify;"],
  // a handle passed down is no licence to query through it
  ['src/app/probe.ts', "declare const q: any;\nexport const rows = q.selectFrom('bookings').selectAll().execute();"],
  ['src/http/admin/probe.ts', 'declare const deps: any;\nexport const k = deps.db.kysely;'],
  ['src/http/api/probe.ts', 'declare const db: any;\nexport const w = db.write(async () => {});'],
  ['src/http/admin/probe.ts', "export const m = import('../../db/repos/booking.repository.js');"],
];

for (const [path, code] of crossings) {
  test(`refused: ${path}: ${code.split('\n')[0]}`, async () => {
    assert.notDeepEqual(await problems(path, code), [], 'the layer rule let this through');
  });
}

const allowed: [string, string][] = [
  ['src/core/time/probe.ts', "import { InvalidInput } from '../errors.js';\nvoid InvalidInput;"],
  [
    'src/db/repos/probe.ts',
    "import type { Kysely } from 'kysely';\nimport { parseDate } from '../../core/time/calendar.js';\nexport type K = Kysely<unknown>;\nvoid parseDate;",
  ],
  [
    'src/app/probe.ts',
    "import { loadSchedules } from '../db/repos/schedule.repository.js';\nimport { renderMessage } from '../mail/templates.js';\nvoid loadSchedules;\nvoid renderMessage;",
  ],
  [
    'src/http/admin/probe.ts',
    "import type { Db } from '../../db/connect.js';\nimport { listSchedules } from '../../app/admin-schedules.js';\nexport const f = (db: Db) => listSchedules(db);",
  ],
  ['src/cli/probe.ts', "import { connect } from '../db/connect.js';\nexport const m = import('../server.js');\nvoid connect;"],
];

for (const [path, code] of allowed) {
  test(`allowed: ${path}: ${code.split('\n')[0]}`, async () => {
    assert.deepEqual(await problems(path, code), []);
  });
}

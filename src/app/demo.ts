// `booking demo`: a ready installation to try the API on a fresh machine.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { isConfigured, setup, setApiEnabled, generateToken } from './installation.js';
import { importSchedules } from './schedules.js';

export const DEMO_ADMIN_EMAIL = 'admin@example.com';

export const DEMO_SCHEDULES = {
  schedules: [
    {
      name: 'Dr. Ada Lovelace',
      slot_interval_minutes: 15,
      min_notice_minutes: 60,
      horizon_days: 60,
      buffer_after_minutes: 5,
      weekly_hours: {
        mon: [
          ['09:00', '12:00'],
          ['13:00', '17:00'],
        ],
        tue: [['09:00', '17:00']],
        wed: [['09:00', '12:00']],
        thu: [
          ['09:00', '12:00'],
          ['13:00', '19:00'],
        ],
        fri: [['08:00', '14:00']],
      },
      reasons: [
        { name: 'First consultation', description: 'Getting to know each other', duration_minutes: 45 },
        { name: 'Follow-up', description: '', duration_minutes: 20 },
      ],
    },
    {
      name: 'Meeting room',
      slot_interval_minutes: 30,
      horizon_days: 30,
      capacity: 2,
      weekly_hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri'].map((d) => [d, [['08:00', '18:00']]])),
      reasons: [{ name: 'One hour', description: 'Room with a projector', duration_minutes: 60 }],
      form: {
        first_name: { label: 'First name', input_type: 'text', required: true },
        last_name: { label: 'Last name', input_type: 'text', required: true },
        email: { label: 'E-mail', input_type: 'email', required: true },
        team: { label: 'Team', form_type: 'select', input_type: 'text', required: false, options: ['Sales', 'Engineering', 'Support'] },
        notes: { label: 'Notes', form_type: 'textarea', input_type: 'text', required: false },
      },
    },
  ],
};

export interface DemoResult {
  token: string;
  /** only when this run created the installation */
  adminPassword: string | null;
}

/** Sets up the demo on a fresh database (kept as it is when it already exists), switches the API on, issues a token. */
export async function demo(db: Db, timezone: string, now: number): Promise<DemoResult> {
  let adminPassword: string | null = null;
  if (!(await isConfigured(db))) {
    adminPassword = randomBytes(9).toString('base64url');
    await setup(db, { timezone, adminEmail: DEMO_ADMIN_EMAIL, adminPassword, name: 'Demo practice' }, now);
    await importSchedules(db, DEMO_SCHEDULES, now);
  }
  await setApiEnabled(db, true);
  return { token: await generateToken(db), adminPassword };
}

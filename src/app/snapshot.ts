// What every API request reads: the installation's settings, its schedules and the webhook endpoints
// subscribed to each event (so that a booking without endpoints does no webhook work), cached per process and
// reloaded when `meta.config_version` changes. Every write that the API reads bumps that version in the
// same transaction, so a change from any process or instance is seen on the very next request, at the
// cost of one primary-key read per request.
import type { Db } from '../db/connect.js';
import { loadSettings } from '../db/repos/installation.repository.js';
import { loadSchedules } from '../db/repos/schedule.repository.js';
import { loadSubscriptions } from '../db/repos/webhook.repository.js';
import type { WebhookEvent } from '../core/webhooks.js';
import { loadClosures, type Closure } from '../db/repos/closure.repository.js';
import type { InstallationSettings } from '../core/settings.js';
import type { ScheduleRules, StoredReason, StoredSchedule } from '../core/schedules/schedule.js';
import { parseDate } from '../core/time/calendar.js';
import { TimeZone } from '../core/time/zone.js';

/** A stored schedule as the API reads it: the engine's rules, and the reasons by id. */
export interface ScheduleView extends Pick<StoredSchedule, 'id' | 'name' | 'form' | 'reminderMinutesBefore'> {
  readonly rules: ScheduleRules;
  readonly reasons: ReadonlyMap<number, StoredReason>;
}

export interface Snapshot {
  readonly version: number;
  readonly settings: InstallationSettings;
  /** null until setup chose one */
  readonly zone: TimeZone | null;
  /** by ascending id */
  readonly schedules: ReadonlyMap<number, ScheduleView>;
  /** the enabled webhook endpoints by event (ids ascending); an event nobody subscribed to is absent */
  readonly webhooks: ReadonlyMap<WebhookEvent, readonly number[]>;
}

/** The local days of every practice-wide closure: one set shared by every schedule's rules. */
export function closedDaysOf(closures: readonly Closure[]): ReadonlySet<number> {
  const days = new Set<number>();
  for (const c of closures) {
    const first = parseDate(c.firstDay);
    const last = parseDate(c.lastDay);
    if (first === null || last === null) continue;
    for (let day = first; day <= last; day++) days.add(day);
  }
  return days;
}

function viewOf(s: StoredSchedule, closedDays: ReadonlySet<number>): ScheduleView {
  return {
    id: s.id,
    name: s.name,
    rules: {
      ...s.settings,
      weeklyHours: s.weeklyHours,
      exceptions: new Map(s.exceptions.map((e) => [parseDate(e.date)!, e.hours])),
      closedDays,
    },
    reasons: new Map(s.reasons.map((r) => [r.id, r])),
    form: s.form,
    reminderMinutesBefore: s.reminderMinutesBefore,
  };
}

export class SnapshotCache {
  private snapshot: Snapshot | null = null;
  private loading: Promise<Snapshot> | null = null;

  constructor(private readonly db: Db) {}

  /** The snapshot loaded last, if any: without a read, for what may be out of date (a hint). */
  latest(): Snapshot | null {
    return this.snapshot;
  }

  /** The snapshot as of the database's current config version (one primary-key read). */
  async current(): Promise<Snapshot> {
    return this.at((await this.db.hot.versions(null)).config);
  }

  /** The snapshot of this config version (or a later one while it loads), for a caller that has just read the version. */
  async at(version: number): Promise<Snapshot> {
    if (this.snapshot?.version === version) return this.snapshot;
    // one reload at a time; requests arriving meanwhile share it
    this.loading ??= this.load(version).finally(() => {
      this.loading = null;
    });
    const loaded = await this.loading;
    return loaded.version >= version ? loaded : this.at(version);
  }

  private async load(version: number): Promise<Snapshot> {
    const [settings, schedules, webhooks, closures] = await Promise.all([
      loadSettings(this.db.kysely),
      loadSchedules(this.db.kysely),
      loadSubscriptions(this.db.kysely),
      loadClosures(this.db.kysely),
    ]);
    const closedDays = closedDaysOf(closures);
    const snapshot: Snapshot = {
      version,
      settings,
      zone: settings.timezone ? TimeZone.find(settings.timezone) : null,
      schedules: new Map(schedules.map((s) => [s.id, viewOf(s, closedDays)])),
      webhooks,
    };
    this.snapshot = snapshot;
    return snapshot;
  }
}

// The schedule vocabulary, one definition per concept (glossary: docs/architecture.md "Schedule shapes").
// definition (what an operator writes) -> stored (the definition with its database ids) -> rules (what
// the free-time engine reads; the snapshot's ScheduleView holds them).
import type { FormField } from '../forms/form-fields.js';
import type { Weekday } from '../time/calendar.js';

/** Minutes after local midnight; `end` may be 1440 (24:00). */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

export type WeeklyHours = Readonly<Partial<Record<Weekday, readonly Interval[]>>>;

export interface DateException {
  /** 'YYYY-MM-DD' */
  readonly date: string;
  /** that day's own intervals; an empty list closes the day */
  readonly hours: readonly Interval[];
}

/** The numbers of a schedule (names in the import file: SETTING_FIELDS). */
export interface ScheduleSettings {
  readonly slotIntervalMinutes: number;
  readonly minNoticeMinutes: number;
  readonly horizonDays: number;
  readonly capacity: number;
  readonly bufferBeforeMinutes: number;
  readonly bufferAfterMinutes: number;
  /** the customer may cancel or move through the manage link until this many minutes before the start */
  readonly cancelCutoffMinutes: number;
}

export interface ReasonDefinition {
  readonly name: string;
  readonly description: string;
  readonly durationMinutes: number;
}

/** A schedule as an operator writes it: one entry of the import file, or the admin area's forms. */
export interface ScheduleDefinition {
  readonly name: string;
  readonly settings: ScheduleSettings;
  readonly weeklyHours: WeeklyHours;
  readonly exceptions: readonly DateException[];
  readonly reasons: readonly ReasonDefinition[];
  readonly form: readonly FormField[];
  /** reminders to the customer, in minutes before the appointment, largest first (none: empty) */
  readonly reminderMinutesBefore: readonly number[];
}

export interface StoredReason extends ReasonDefinition {
  readonly id: number;
  /** when it was retired (gone from the API and new bookings, its bookings kept); null or absent: in service */
  readonly retiredAt?: number | null;
}

/** A definition as the database holds it, with the ids it gave the schedule and its reasons. */
export interface StoredSchedule extends Omit<ScheduleDefinition, 'reasons'> {
  readonly id: number;
  readonly reasons: readonly StoredReason[];
  /** when it was retired (gone from the API and new bookings, its bookings kept); null or absent: in service */
  readonly retiredAt?: number | null;
}

/** What the free-time engine reads: the settings and the hours, exceptions keyed by local day. */
/** What the availability engine needs: the manage link's cut-off is no rule of free times. */
export interface ScheduleRules extends Omit<ScheduleSettings, 'cancelCutoffMinutes'> {
  readonly weeklyHours: WeeklyHours;
  /** local day (days since epoch) -> that day's own intervals; an empty list closes the day */
  readonly exceptions: ReadonlyMap<number, readonly Interval[]>;
  /** local days the whole practice is closed (docs/admin.md, "Closures"): closed even where an exception opens them */
  readonly closedDays?: ReadonlySet<number>;
}

// Appointments that no longer fit the opening hours (the hours or exceptions were changed after they were
// booked, or the installation's zone): they stay booked, and the admin area points them out.
import type { ScheduleRules } from '../schedules/schedule.js';
import type { TimeZone } from '../time/zone.js';
import { openingIntervals } from './free-slots.js';

/** Whether the appointment [start, end) lies inside one opening interval of its local day. */
export function withinOpeningHours(rules: ScheduleRules, zone: TimeZone, start: number, end: number): boolean {
  const from = zone.localMinuteOf(start);
  const to = from + Math.round((end - start) / 60_000);
  return openingIntervals(rules, zone.localDayOf(start)).some((i) => i.start <= from && to <= i.end);
}

// Calendar arithmetic on plain local dates ('YYYY-MM-DD') and wall-clock minutes, without any zone.
// Dates are handled as days since 1970-01-01 in the proleptic Gregorian calendar.

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export const MINUTE_MS = 60_000;
export const DAY_MINUTES = 1440;
export const DAY_MS = 86_400_000;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const SLOT_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const HHMM_RE = /^(\d{2}):(\d{2})$/;

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Days since the epoch for a valid calendar date, or null ('2026-02-30' is not a date). */
export function parseDate(text: string): number | null {
  const m = DATE_RE.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return Math.round(ms / DAY_MS);
}

export function formatDate(dayNumber: number): string {
  const t = new Date(dayNumber * DAY_MS);
  return `${String(t.getUTCFullYear()).padStart(4, '0')}-${pad2(t.getUTCMonth() + 1)}-${pad2(t.getUTCDate())}`;
}

export function weekdayOf(dayNumber: number): Weekday {
  // 1970-01-01 was a Thursday
  return WEEKDAYS[(((dayNumber + 3) % 7) + 7) % 7]!;
}

/** 'HH:MM' to minutes after midnight; '24:00' only when allowed (interval ends). */
export function parseClock(text: string, { allow24 = false } = {}): number | null {
  const m = HHMM_RE.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (allow24 && h === 24 && min === 0) return DAY_MINUTES;
  if (h > 23 || min > 59) return null;
  return h * 60 + min;
}

export function formatClock(minutes: number): string {
  return `${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`;
}

export interface LocalDateTime {
  day: number; // days since epoch
  minute: number; // minutes after local midnight
  second: number;
}

/** 'YYYY-MM-DD HH:MM:SS' to its parts, or null when it is not a real calendar date and clock time. */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  const m = SLOT_RE.exec(text);
  if (!m) return null;
  const day = parseDate(`${m[1]}-${m[2]}-${m[3]}`);
  const [h, min, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (day === null || h > 23 || min > 59 || s > 59) return null;
  return { day, minute: h * 60 + min, second: s };
}

export function formatLocalDateTime(day: number, minute: number): string {
  return `${formatDate(day)} ${formatClock(minute)}:00`;
}

/** The instant as 'YYYY-MM-DDTHH:MM:SSZ'. */
export function formatUtc(instantMs: number): string {
  return new Date(instantMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

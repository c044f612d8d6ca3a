// Wall-clock time in an IANA zone <-> instants, with the DST rules of docs/decisions.md §4.
//
// Intl costs 13-26 µs a call, far too much per slot candidate (a year on a 15-minute grid is ~35,000
// candidates). So each local day's UTC offsets are found once (the offset before and after the day's
// transition, and the transition's instant when there is one) and kept for the life of the process;
// a candidate's instant is then plain arithmetic.
import { DAY_MS, MINUTE_MS } from './calendar.js';

interface DayOffsets {
  /** UTC offset (ms, local minus UTC) before the transition, or all day when there is none */
  before: number;
  /** UTC offset after the transition */
  after: number;
  /** instant of the zone transition that can affect this day's wall times, or null */
  transitionAt: number | null;
}

const HOUR_MS = 3_600_000;

export class TimeZone {
  private readonly format: Intl.DateTimeFormat;
  private readonly days = new Map<number, DayOffsets>();

  private constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  private static readonly zones = new Map<string, TimeZone>();

  /** The zone, or null when the name is not an IANA time zone this runtime knows. */
  static find(name: string): TimeZone | null {
    const known = TimeZone.zones.get(name);
    if (known) return known;
    try {
      const zone = new TimeZone(name);
      // Intl accepts offsets like '+01:00' too; we only want named zones
      if (!/^[A-Za-z]/.test(name)) return null;
      TimeZone.zones.set(name, zone);
      return zone;
    } catch {
      return null;
    }
  }

  static of(name: string): TimeZone {
    const zone = TimeZone.find(name);
    if (!zone) throw new RangeError(`unknown time zone ${name}`);
    return zone;
  }

  /** Local minus UTC, in ms, at the instant (Intl, slow: not for per-candidate use). */
  offsetAt(instant: number): number {
    const whole = Math.floor(instant / 1000) * 1000;
    const p: Record<string, number> = {};
    for (const part of this.format.formatToParts(new Date(whole))) {
      if (part.type !== 'literal') p[part.type] = Number(part.value);
    }
    const wall = Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute, p.second);
    return wall - whole;
  }

  /** The local calendar day (days since epoch) that contains the instant. */
  localDayOf(instant: number): number {
    return Math.floor((instant + this.cachedOffsetAt(instant)) / DAY_MS);
  }

  /** Local minute of day (0..1439) at the instant. */
  localMinuteOf(instant: number): number {
    const wall = instant + this.cachedOffsetAt(instant);
    return Math.floor((wall - Math.floor(wall / DAY_MS) * DAY_MS) / MINUTE_MS);
  }

  /**
   * The offset at an instant from the per-day cache rather than Intl: every request asks for "today",
   * and an Intl call costs more than the rest of a /slots answer's arithmetic. The offsets kept for the
   * UTC day of the instant cover it (they span from 15 h before that day to 37 h after its start).
   */
  private cachedOffsetAt(instant: number): number {
    const { before, after, transitionAt } = this.offsetsOf(Math.floor(instant / DAY_MS));
    return transitionAt === null || instant < transitionAt ? before : after;
  }

  private offsetsOf(day: number): DayOffsets {
    const cached = this.days.get(day);
    if (cached) return cached;
    // every wall time of this day (and its 24:00) falls between these instants, as offsets lie in [-12h, +14h]
    const wallMidnight = day * DAY_MS;
    let lo = wallMidnight - 15 * HOUR_MS;
    let hi = wallMidnight + 37 * HOUR_MS;
    const before = this.offsetAt(lo);
    const after = this.offsetAt(hi);
    let transitionAt: number | null = null;
    if (before !== after) {
      // zone transitions fall on whole seconds: bisect to the first second with the new offset
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (this.offsetAt(mid) === before) lo = mid;
        else hi = mid;
      }
      transitionAt = hi;
    }
    const offsets = { before, after, transitionAt };
    if (this.days.size > 50_000) this.days.clear();
    this.days.set(day, offsets);
    return offsets;
  }

  /**
   * Every instant whose wall-clock reading is `minute` on local `day`, earliest first:
   * none in a spring-forward gap, two in a fall-back overlap.
   */
  instantsOf(day: number, minute: number): number[] {
    const { before, after, transitionAt } = this.offsetsOf(day);
    const wall = day * DAY_MS + minute * MINUTE_MS;
    if (transitionAt === null) return [wall - before];
    const found: number[] = [];
    if (wall - before < transitionAt) found.push(wall - before);
    if (wall - after >= transitionAt) found.push(wall - after);
    return found.sort((x, y) => x - y);
  }

  /** The meaning of a wall time as a start (docs/decisions.md §4): its first occurrence, or null when it does not exist. */
  startInstant(day: number, minute: number): number | null {
    const found = this.instantsOf(day, minute);
    return found.length ? found[0]! : null;
  }

  /**
   * An opening-interval bound as an instant: its first occurrence; a bound that falls in a
   * spring-forward gap is the instant the clock jumps over it. `minute` may be 1440 (24:00).
   */
  boundInstant(day: number, minute: number): number {
    if (minute >= 1440) return this.boundInstant(day + 1, minute - 1440);
    const first = this.startInstant(day, minute);
    if (first !== null) return first;
    return this.offsetsOf(day).transitionAt!;
  }
}

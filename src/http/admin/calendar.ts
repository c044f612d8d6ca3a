// Calendar: a time grid of one schedule's day or week, or of one day with every schedule side by side, and a
// plain day list for printing. Server-rendered; the grid is CSS grid placed by classes (the admin pages' CSP
// allows no inline style), in rows of five minutes of local wall time: a day of 23 or 25 hours keeps its
// wall-clock rows, the skipped hour is marked, and the repeated hour's bookings say which of the two they are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFound } from '../../core/errors.js';
import { listBookings, type BookingRow } from '../../app/admin-bookings.js';
import { DAY_MS, formatClock, formatDate, parseDate, WEEKDAYS, weekdayOf } from '../../core/time/calendar.js';
import { openingIntervals } from '../../core/availability/free-slots.js';
import { withinOpeningHours } from '../../core/availability/outside-hours.js';
import type { ScheduleView, Snapshot } from '../../app/snapshot.js';
import { html, type Markup } from './html.js';
import { page } from './layout.js';
import { idParam, query, sendPage, state, visible, type AdminDeps } from './context.js';

/** Minutes per grid row: every booking and opening bound on a five-minute mark is placed exactly. */
const ROW_MINUTES = 5;
const ROWS_PER_DAY = 1440 / ROW_MINUTES;
/** Side-by-side lanes a column can show; further overlaps share the last lane. */
const MAX_LANES = 8;
/** Schedules side by side in the all-schedules view (more are listed on further pages of schedules: none yet). */
const MAX_COLUMNS = 40;

/**
 * The calendar's CSS: placement classes generated for every row and lane (r-s12 starts on row 12), since a
 * style attribute would be refused by the CSP. Appended to the admin stylesheet.
 */
export const CALENDAR_CSS = (() => {
  const rules: string[] = [
    `.cal-nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end;margin:0 0 1rem}.cal-nav form{display:flex;gap:.5rem;align-items:end;flex-wrap:wrap}.cal-nav .field{margin:0}`,
    `.cal-scroll{overflow-x:auto;max-width:100%;border:1px solid #d5d9e0;background:#fff;border-radius:6px}`,
    `.cal{display:grid;min-width:100%}`,
    `.cal-head{font-weight:600;padding:.35rem .4rem;border-bottom:1px solid #d5d9e0;border-left:1px solid #e6e9ee;position:sticky;top:0;background:#f5f6f8;font-size:.9rem}`,
    `.cal-head.today{background:#dbe8ff;color:#0b3d91}.cal-head small{display:block;font-weight:400;color:#5b6474}`,
    `.cal-times,.cal-col{display:grid;position:relative}`,
    `.cal-col{border-left:1px solid #e6e9ee;background:repeating-linear-gradient(135deg,#eef0f3 0 6px,#f6f7f9 6px 12px)}`,
    `.cal-col.today{box-shadow:inset 0 0 0 2px #7fb0ff}`,
    `.cal-times span{font-size:.75rem;color:#5b6474;padding-right:.3rem;text-align:right;border-top:1px solid #d5d9e0}`,
    `.cal-col .hour{grid-column:1/-1;border-top:1px solid #e3e6eb}`,
    `.cal-col .open{grid-column:1/-1;background:#fff}`,
    `.cal-col .gap{grid-column:1/-1;background:#fde8e8;font-size:.75rem;color:#8a1c1c;padding:0 .3rem;overflow:hidden;z-index:1}`,
    `.cal-col .appt{z-index:2;margin:1px 2px;padding:.1rem .3rem;border-radius:4px;background:#dbe8ff;border:1px solid #7fb0ff;color:#102a56;font-size:.8rem;line-height:1.2;overflow:hidden;text-decoration:none;min-height:1.1rem}`,
    `.cal-col .appt:hover,.cal-col .appt:focus{overflow:visible;z-index:3;height:max-content}`,
    `.cal-col .appt.outside{background:#fff4e0;border-color:#e0a030}.cal-col .appt strong{display:block}`,
    `.cal-legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.85rem;color:#5b6474}`,
    `.cal-legend .key{display:inline-block;width:1rem;height:.8rem;vertical-align:middle;border:1px solid #d5d9e0;margin-right:.25rem}`,
    `.cal-legend .key.open{background:#fff}.cal-legend .key.closed{background:#eef0f3}.cal-legend .key.outside{background:#fff4e0}`,
    `.day-list td,.day-list th{vertical-align:top}`,
    `@media print{.top,.cal-nav,.no-print,.error-summary,.flash{display:none!important}body{background:#fff;font-size:11pt}main{max-width:none;margin:0;padding:0}.day-list{width:100%;border-collapse:collapse}.day-list th,.day-list td{border:1px solid #999;padding:2pt 4pt}a{color:inherit;text-decoration:none}}`,
  ];
  for (let n = 1; n <= ROWS_PER_DAY + 1; n++) rules.push(`.r-s${n}{grid-row-start:${n}}.r-e${n}{grid-row-end:${n}}`);
  for (let n = 1; n <= MAX_LANES; n++)
    rules.push(`.lanes-${n}{grid-template-columns:repeat(${n},minmax(0,1fr))}.lane-${n}{grid-column:${n}}`);
  for (let hours = 1; hours <= 24; hours++)
    rules.push(`.rows-${hours * (60 / ROW_MINUTES)}{grid-template-rows:repeat(${hours * (60 / ROW_MINUTES)},.55rem)}`);
  // columns: a day fits a phone; a week or many schedules keep a readable width and scroll inside .cal-scroll
  for (let n = 1; n <= MAX_COLUMNS; n++)
    rules.push(`.cal.n${n}{grid-template-columns:3.5rem repeat(${n},minmax(${n > 2 ? '8rem' : '0'},1fr))}`);
  return rules.join('\n');
})();

type View = 'day' | 'week' | 'all';

function today(snapshot: Snapshot, now: number): number {
  return snapshot.zone ? snapshot.zone.localDayOf(now) : Math.floor(now / DAY_MS);
}

function dayStart(snapshot: Snapshot, day: number): number {
  return snapshot.zone ? snapshot.zone.boundInstant(day, 0) : day * DAY_MS;
}

const mondayOf = (day: number) => day - WEEKDAYS.indexOf(weekdayOf(day));
/** "Monday": a day number is days since 1970-01-01, so its UTC date is the local date itself */
const weekdayName = (day: number) => new Date(day * DAY_MS).toLocaleDateString('en-GB', { weekday: 'long', timeZone: 'UTC' });
const dayTitle = (day: number) => `${weekdayName(day)} ${formatDate(day)}`;

/** What the day's clock does: a day of 23 or 25 hours (null on an ordinary day). */
interface ClockChange {
  hours: number;
  /** wall minutes [from, to) skipped (spring forward) or repeated (fall back) */
  from: number;
  to: number;
}

function clockChange(snapshot: Snapshot, day: number): ClockChange | null {
  const zone = snapshot.zone;
  if (!zone) return null;
  const hours = (zone.boundInstant(day + 1, 0) - zone.boundInstant(day, 0)) / 3_600_000;
  if (hours === 24) return null;
  // the minutes whose wall reading occurs zero times (23 hours) or twice (25 hours)
  let from = -1;
  let to = -1;
  for (let m = 0; m < 1440; m += ROW_MINUTES) {
    const count = zone.instantsOf(day, m).length;
    if (count !== 1) {
      if (from < 0) from = m;
      to = m + ROW_MINUTES;
    }
  }
  return from < 0 ? null : { hours, from, to };
}

/** A booking as the grid places it: by its local wall-clock start and end on its local day. */
interface Placed {
  booking: BookingRow;
  day: number;
  startMinute: number;
  endMinute: number;
  outside: boolean;
  /** in a repeated hour: which of the two readings (1 or 2), else 0 */
  occurrence: number;
  lane: number;
}

function place(snapshot: Snapshot, schedule: ScheduleView | undefined, b: BookingRow): Omit<Placed, 'lane'> {
  const zone = snapshot.zone;
  const day = zone ? zone.localDayOf(b.start) : Math.floor(b.start / DAY_MS);
  const startMinute = zone ? zone.localMinuteOf(b.start) : Math.floor((b.start % DAY_MS) / 60_000);
  const endDay = zone ? zone.localDayOf(b.end) : Math.floor(b.end / DAY_MS);
  let endMinute = endDay > day ? 1440 : zone ? zone.localMinuteOf(b.end) : Math.floor((b.end % DAY_MS) / 60_000);
  // across a fall-back hour the wall end can read earlier than the start: the duration decides then
  if (endMinute <= startMinute) endMinute = Math.min(1440, startMinute + Math.max(ROW_MINUTES, Math.round((b.end - b.start) / 60_000)));
  const readings = zone ? zone.instantsOf(day, startMinute) : [b.start];
  const occurrence = readings.length > 1 ? readings.indexOf(b.start) + 1 : 0;
  const outside = zone !== null && schedule !== undefined && !withinOpeningHours(schedule.rules, zone, b.start, b.end);
  return { booking: b, day, startMinute, endMinute, outside, occurrence };
}

/** Lanes for overlapping bookings (capacity > 1): each takes the first lane free at its start. */
function assignLanes(items: Omit<Placed, 'lane'>[]): { placed: Placed[]; lanes: number } {
  const sorted = [...items].sort((a, b) => a.startMinute - b.startMinute || a.endMinute - b.endMinute);
  const laneEnds: number[] = [];
  const placed = sorted.map((item) => {
    let lane = laneEnds.findIndex((end) => end <= item.startMinute);
    if (lane < 0) lane = laneEnds.length < MAX_LANES ? laneEnds.length : MAX_LANES - 1;
    laneEnds[lane] = Math.max(laneEnds[lane] ?? 0, item.endMinute);
    return { ...item, lane: lane + 1 };
  });
  return { placed, lanes: Math.max(1, laneEnds.length) };
}

interface Column {
  key: string;
  head: Markup;
  day: number;
  schedule: ScheduleView | undefined;
  bookings: BookingRow[];
}

const row = (minute: number, first: number) => Math.floor((minute - first) / ROW_MINUTES) + 1;

function grid(snapshot: Snapshot, columns: readonly Column[], now: number): Markup {
  const todayNumber = today(snapshot, now);
  const prepared = columns.map((c) => {
    const hours = c.schedule ? openingIntervals(c.schedule.rules, c.day) : [];
    const { placed, lanes } = assignLanes(c.bookings.map((b) => place(snapshot, c.schedule, b)).filter((p) => p.day === c.day));
    return { ...c, hours, placed, lanes, change: clockChange(snapshot, c.day) };
  });
  // the rows shown: the whole hours around every opening interval and booking, 08:00-18:00 at least
  let first = 8 * 60;
  let last = 18 * 60;
  for (const c of prepared) {
    for (const { start, end } of [...c.hours, ...c.placed.map((p) => ({ start: p.startMinute, end: p.endMinute }))]) {
      first = Math.min(first, start);
      last = Math.max(last, end);
    }
  }
  first = Math.floor(first / 60) * 60;
  last = Math.min(1440, Math.ceil(last / 60) * 60);
  const rows = (last - first) / ROW_MINUTES;
  const clip = (m: number) => Math.min(last, Math.max(first, m));
  const hourMarks = Array.from({ length: (last - first) / 60 }, (_, i) => first + i * 60);
  return html`<div class="cal-scroll" tabindex="0" role="region" aria-label="Calendar grid"><div class="cal n${columns.length}" data-rows="${rows}">
<div class="cal-head"></div>${prepared.map((c) => html`<div class="cal-head${c.day === todayNumber ? ' today' : ''}">${c.head}${c.day === todayNumber ? html`<small>Today</small>` : ''}${c.change ? html`<small class="dst">${c.change.hours} hours: clocks go ${c.change.hours < 24 ? 'forward' : 'back'}</small>` : ''}</div>`)}
<div class="cal-times rows-${rows}">${hourMarks.map((m) => html`<span class="r-s${row(m, first)} r-e${row(m + 60, first)}">${formatClock(m)}</span>`)}</div>
${prepared.map(
  (
    c,
  ) => html`<div class="cal-col rows-${rows} lanes-${c.lanes}${c.day === todayNumber ? ' today' : ''}" data-day="${formatDate(c.day)}"${c.schedule ? html` data-schedule="${c.schedule.name}"` : ''}>
${hourMarks.map((m) => html`<div class="hour r-s${row(m, first)} r-e${row(m + 60, first)}"></div>`)}
${c.hours.map((h) => html`<div class="open r-s${row(clip(h.start), first)} r-e${row(clip(h.end), first)}" title="Open ${formatClock(h.start)}–${formatClock(h.end)}"></div>`)}
${
  c.change && c.change.from >= first && c.change.to <= last
    ? html`<div class="gap r-s${row(c.change.from, first)} r-e${row(c.change.to, first)}">${
        c.change.hours < 24
          ? `${formatClock(c.change.from)}–${formatClock(c.change.to)} does not exist today (clocks go forward)`
          : `${formatClock(c.change.from)}–${formatClock(c.change.to)} happens twice today (clocks go back)`
      }</div>`
    : ''
}
${c.placed.map((p) => {
  const b = p.booking;
  const end = p.endMinute >= 1440 ? '24:00' : formatClock(p.endMinute);
  return html`<a class="appt lane-${p.lane} r-s${row(clip(p.startMinute), first)} r-e${Math.max(row(clip(p.startMinute), first) + 1, row(clip(p.endMinute) + ROW_MINUTES - 1, first))}${p.outside ? ' outside' : ''}" href="/admin/bookings/${b.detailsId}">${formatClock(p.startMinute)}–${end}${p.occurrence ? html` <em>(${p.occurrence === 1 ? 'first' : 'second'} ${formatClock(p.startMinute)})</em>` : ''} ${b.reasonName}<br>${b.customerName || b.customerEmail || ''}${p.outside ? html`<strong>outside the opening hours</strong>` : ''}</a>`;
})}
</div>`,
)}
</div></div>
<p class="cal-legend"><span><span class="key open"></span>open</span><span><span class="key closed"></span>closed</span><span><span class="key outside"></span>booked outside the opening hours</span></p>`;
}

function calendarLink(view: View, day: number, schedule: number | null): string {
  return `/admin/calendar?view=${view}&date=${formatDate(day)}${schedule !== null && view !== 'all' ? `&schedule=${schedule}` : ''}`;
}

function navigation(
  view: View,
  day: number,
  scheduleId: number | null,
  snapshot: Snapshot,
  now: number,
  schedules: readonly ScheduleView[],
): Markup {
  const step = view === 'week' ? 7 : 1;
  const unit = view === 'week' ? 'week' : 'day';
  return html`<nav class="cal-nav" aria-label="Calendar">
<a class="button secondary" href="${calendarLink(view, day - step, scheduleId)}" rel="prev">← Previous ${unit}</a>
<a class="button secondary" href="${calendarLink(view, today(snapshot, now), scheduleId)}">Today</a>
<a class="button secondary" href="${calendarLink(view, day + step, scheduleId)}" rel="next">Next ${unit} →</a>
<form method="get" action="/admin/calendar"><input type="hidden" name="view" value="${view}">
${
  view === 'all'
    ? ''
    : html`<div class="field"><label for="cal-schedule">Schedule</label><select id="cal-schedule" name="schedule">${schedules.map(
        (s) => html`<option value="${s.id}"${s.id === scheduleId ? html` selected` : ''}>${s.name}</option>`,
      )}</select></div>`
}
<div class="field"><label for="cal-date">Jump to date</label><input id="cal-date" name="date" type="date" value="${formatDate(day)}" required></div>
<button>Go</button></form>
</nav>
<p class="no-print">View: ${(
    [
      ['day', 'Day'],
      ['week', 'Week'],
      ['all', 'All schedules'],
    ] as const
  ).map(([v, label], i) =>
    v === view
      ? html`${i ? ' · ' : ''}<strong aria-current="page">${label}</strong>`
      : html`${i ? ' · ' : ''}<a href="${calendarLink(v, day, scheduleId ?? schedules[0]?.id ?? null)}">${label}</a>`,
  )} · <a href="/admin/calendar/print?date=${formatDate(day)}${view === 'all' || scheduleId === null ? '' : `&schedule=${scheduleId}`}">Print day list</a></p>`;
}

/** The list to print: every booking of the day, in time order, with what the desk needs at hand. */
function dayList(snapshot: Snapshot, rows: readonly BookingRow[]): Markup {
  if (rows.length === 0) return html`<p class="muted">No bookings.</p>`;
  const zone = snapshot.zone;
  const clock = (instant: number) => (zone ? formatClock(zone.localMinuteOf(instant)) : new Date(instant).toISOString().slice(11, 16));
  const notes = (b: BookingRow) => {
    const value = b.answers.notes;
    return typeof value === 'string' ? value : '';
  };
  return html`<div class="table-wrap"><table class="day-list"><thead><tr><th>Time</th><th>Schedule</th><th>Reason</th><th>Customer</th><th>Phone</th><th>Notes</th></tr></thead><tbody>
${rows.map(
  (b) =>
    html`<tr><td>${clock(b.start)}–${clock(b.end)}</td><td>${b.scheduleName}</td><td>${b.reasonName}</td><td><a href="/admin/bookings/${b.detailsId}">${b.customerName || b.customerEmail || ''}</a>${b.customerName && b.customerEmail ? html`<br><small>${b.customerEmail}</small>` : ''}</td><td>${b.customerPhone}</td><td>${notes(b)}</td></tr>`,
)}
</tbody></table></div>`;
}

export function calendarRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  function chosenDay(request: FastifyRequest, snapshot: Snapshot): number {
    return parseDate(query(request).date ?? '') ?? today(snapshot, clock());
  }

  /** the schedules in service the user may see */
  const schedulesOf = (request: FastifyRequest, snapshot: Snapshot): ScheduleView[] => {
    const seen = visible(request);
    return [...snapshot.schedules.values()].filter((s) => !seen || seen.includes(s.id));
  };

  function chosenSchedule(request: FastifyRequest, snapshot: Snapshot): ScheduleView | undefined {
    const asked = query(request).schedule;
    const schedules = schedulesOf(request, snapshot);
    if (asked === undefined || asked === '') return schedules[0];
    const id = idParam(asked);
    const schedule = id === null ? undefined : schedules.find((s) => s.id === id);
    if (!schedule) throw new NotFound('Schedule not found');
    return schedule;
  }

  const bookingsBetween = (request: FastifyRequest, snapshot: Snapshot, from: number, to: number, scheduleId?: number) =>
    listBookings(
      db,
      {
        when: 'all',
        scheduleId: scheduleId ?? null,
        scheduleIds: visible(request),
        from: dayStart(snapshot, from),
        to: dayStart(snapshot, to),
        limit: 5000,
      },
      clock(),
    ).then((rows) => rows.filter((b) => b.status !== 'cancelled').sort((a, b) => a.start - b.start));

  app.get('/calendar', async (request: FastifyRequest, reply: FastifyReply) => {
    const { page: ctx, snapshot } = state(request);
    const q = query(request);
    const view: View = q.view === 'week' || q.view === 'all' ? q.view : 'day';
    const day = chosenDay(request, snapshot);
    const now = clock();
    if (view === 'all') {
      const schedules = schedulesOf(request, snapshot);
      const rows = await bookingsBetween(request, snapshot, day, day + 1);
      const columns = schedules.map((s) => ({
        key: String(s.id),
        head: html`<a href="${calendarLink('day', day, s.id)}">${s.name}</a>`,
        day,
        schedule: s,
        bookings: rows.filter((b) => b.scheduleId === s.id),
      }));
      return sendPage(
        reply,
        page(
          ctx,
          `${dayTitle(day)}: all schedules`,
          html`${navigation(view, day, null, snapshot, now, schedules)}${
            columns.length ? grid(snapshot, columns.slice(0, MAX_COLUMNS), now) : html`<p class="muted">No schedule in service.</p>`
          }`,
          { current: '/admin/calendar' },
        ),
      );
    }
    const schedule = chosenSchedule(request, snapshot);
    if (!schedule)
      return sendPage(
        reply,
        page(ctx, 'Calendar', html`<p class="muted">No schedule in service: <a href="/admin/schedules">add one</a>.</p>`),
      );
    const from = view === 'week' ? mondayOf(day) : day;
    const days = view === 'week' ? 7 : 1;
    const rows = await bookingsBetween(request, snapshot, from, from + days, schedule.id);
    const columns = Array.from({ length: days }, (_, i) => {
      const d = from + i;
      return {
        key: formatDate(d),
        head:
          view === 'week'
            ? html`<a href="${calendarLink('day', d, schedule.id)}">${weekdayName(d).slice(0, 3)} ${formatDate(d)}</a>`
            : html`${schedule.name}`,
        day: d,
        schedule,
        bookings: rows,
      };
    });
    return sendPage(
      reply,
      page(
        ctx,
        view === 'week' ? `Week of ${formatDate(from)}: ${schedule.name}` : `${dayTitle(day)}: ${schedule.name}`,
        html`${navigation(view, day, schedule.id, snapshot, now, schedulesOf(request, snapshot))}${grid(snapshot, columns, now)}`,
        { current: '/admin/calendar' },
      ),
    );
  });

  app.get('/calendar/print', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const day = chosenDay(request, snapshot);
    const asked = query(request).schedule;
    const schedule = asked ? chosenSchedule(request, snapshot) : undefined;
    const rows = await bookingsBetween(request, snapshot, day, day + 1, schedule?.id);
    const change = clockChange(snapshot, day);
    return sendPage(
      reply,
      page(
        ctx,
        `${dayTitle(day)}: ${schedule ? schedule.name : 'all schedules'}`,
        html`<p class="no-print"><a href="${calendarLink(schedule ? 'day' : 'all', day, schedule?.id ?? null)}">← Back to the calendar</a> · Print with your browser (Ctrl+P); the menu and links are left out on paper.</p>
${change ? html`<p>This day has ${change.hours} hours: clocks go ${change.hours < 24 ? 'forward' : 'back'} (${formatClock(change.from)}–${formatClock(change.to)}).</p>` : ''}
${dayList(snapshot, rows)}`,
        { current: '/admin/calendar' },
      ),
    );
  });

  // the per-schedule week calendar of earlier versions: its address keeps working
  app.get('/schedules/:id/calendar', async (request, reply) => {
    const { snapshot } = state(request);
    const id = idParam((request.params as { id?: string }).id);
    if (id === null || !schedulesOf(request, snapshot).some((s) => s.id === id)) throw new NotFound('Schedule not found');
    const week = parseDate(query(request).week ?? '');
    return reply.redirect(calendarLink('week', week ?? today(snapshot, clock()), id), 303);
  });
}

// Bookings: the list (upcoming, past, by schedule and dates), a booking's details, cancelling (the
// calendar is in calendar.ts), and booking by hand for a customer on the phone. Booking and cancelling go
// through src/app/bookings.ts: the same rules and the same transaction as the API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import {
  listBookingsPage,
  bookingsCsv,
  findBooking,
  findCustomer,
  listCustomers,
  type BookingFilter,
  type BookingRow,
} from '../../app/admin-bookings.js';
import { ATTENDANCE_LABELS, STAFF_OVERRIDES, STAFF_OVERRIDE_LABELS, statusLabel, type StaffOverride } from '../../core/bookings.js';
import { bookingStatusRoutes } from './booking-status.js';
import { cancelBooking, createBooking, editBookingAnswers } from '../../app/bookings.js';
import { listSlots, staffSlots } from '../../app/availability.js';
import { listSchedules } from '../../app/admin-schedules.js';
import { text } from './form-input.js';
import { publicFields, validateSubmission, type FormField } from '../../core/forms/form-fields.js';
import { formatDate, parseDate, DAY_MS } from '../../core/time/calendar.js';
import type { Snapshot } from '../../app/snapshot.js';
import { mailWarning, type FixedMailSettings } from './mail.js';
import { html, type Markup } from './html.js';
import {
  checkbox,
  confirmPage,
  csrfField,
  fieldError,
  humanReason,
  input,
  onceField,
  page,
  select,
  textarea,
  type Errors,
  type PageContext,
} from './layout.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';
import { actor, body, formTokenOfPage, idParam, localTime, query, sendPage, state, visible, type AdminDeps } from './context.js';
import { bookingHistory, describeEvent } from '../../app/audit.js';

const SOURCE_LABEL: Record<string, string> = { api: 'API', admin: 'admin area (by hand)' };

function today(snapshot: Snapshot, now: number): number {
  return snapshot.zone ? snapshot.zone.localDayOf(now) : Math.floor(now / DAY_MS);
}

/** The instant a local date starts */
function dayStart(snapshot: Snapshot, day: number): number {
  return snapshot.zone ? snapshot.zone.boundInstant(day, 0) : day * DAY_MS;
}

/**
 * The customer of a booking, linked to their page; for staff, a customer shared with another schedule is shown
 * as the booking's answers name them, without a link (their page is not for staff: docs/admin.md).
 */
function customerLink(b: BookingRow): Markup {
  const name = b.customerName || b.customerEmail;
  return b.customerVisible
    ? html`<a href="/admin/customers/${b.customerId}">${name || `Customer ${b.customerId}`}</a>`
    : html`<span class="customer-as-answered">${name || '(no name given)'}</span>`;
}

export function bookingTable(snapshot: Snapshot, rows: readonly BookingRow[], options: { showSchedule?: boolean } = {}): Markup {
  if (rows.length === 0) return html`<p class="muted">No bookings.</p>`;
  return html`<div class="table-wrap"><table class="bookings"><thead><tr><th>When</th>${options.showSchedule !== false ? html`<th>Schedule</th>` : ''}<th>Reason</th><th>Customer</th><th>Made through</th><th>Status</th></tr></thead><tbody>
${rows.map(
  (b) => html`<tr><td><a href="/admin/bookings/${b.detailsId}">${localTime(snapshot, b.start)}</a></td>
${options.showSchedule !== false ? html`<td>${b.scheduleName}</td>` : ''}<td>${b.reasonName}</td>
<td>${customerLink(b)}</td>
<td>${SOURCE_LABEL[b.source] ?? b.source}${overrideNote(b.overrides)}</td><td>${statusLabel(b)}</td></tr>`,
)}
</tbody></table></div>`;
}

/** The rules set aside when the booking was made by hand, as the list and the details state them */
function overrideNote(overrides: readonly StaffOverride[]): Markup | string {
  return overrides.length ? html` <strong class="override">· ${overrides.map((o) => STAFF_OVERRIDE_LABELS[o]).join(', ')}</strong>` : '';
}

function answerValue(value: unknown): string {
  if (value === true) return 'yes';
  if (value === false) return 'no';
  return String(value);
}

export async function bookingRoutes(app: FastifyInstance, deps: AdminDeps, fixedMail: FixedMailSettings): Promise<void> {
  bookingListRoute(app, deps, fixedMail);
  bookingDetailsRoutes(app, deps);
  bookByHandRoutes(app, deps);
  bookingStatusRoutes(app, deps);
}

const PAGE_SIZE = 50;
const STATUS_CHOICES: [string, string][] = [
  ['booked', 'Booked'],
  ['completed', 'Completed'],
  ['no_show', 'No-show'],
  ['cancelled', 'Cancelled'],
  ['any', 'Any status'],
];

interface ListQuery {
  /** what the form shows back */
  values: { q: string; when: string; schedule: string; status: string; from: string; to: string };
  filter: BookingFilter;
  page: number;
  errors: Record<string, string>;
}

/**
 * The Bookings page's filter from its address, shared by the list and "Export CSV" so the file holds exactly
 * the rows the list shows (all pages). Dates are local dates of the installation: `to` includes its day.
 */
function listQuery(request: FastifyRequest, snapshot: Snapshot): ListQuery {
  const q = query(request);
  const when = q.when === 'past' || q.when === 'all' ? q.when : 'upcoming';
  const scheduleId = idParam(q.schedule);
  // `cancelled=on`: the earlier form's "Include cancelled" box, still honoured in saved links
  const status = STATUS_CHOICES.some(([v]) => v === q.status) ? q.status! : q.cancelled === 'on' ? 'any' : 'booked';
  // completed and no-show are booked appointments the office marked afterwards (their time stays taken)
  const attendance = status === 'completed' || status === 'no_show' ? status : null;
  const from = q.from ? parseDate(q.from) : null;
  const to = q.to ? parseDate(q.to) : null;
  const text = (q.q ?? '').trim();
  const errors: Record<string, string> = {};
  if (q.from && from === null) errors.from = 'Not a date (YYYY-MM-DD).';
  if (q.to && to === null) errors.to = 'Not a date (YYYY-MM-DD).';
  if (from !== null && to !== null && to < from) errors.to = 'The end date is before the start date.';
  if (text.length > 200) errors.q = 'Search for at most 200 characters.';
  const page = Math.max(1, Math.min(1_000_000, Number.parseInt(q.page ?? '', 10) || 1));
  return {
    values: { q: text, when, schedule: scheduleId === null ? '' : String(scheduleId), status, from: q.from ?? '', to: q.to ?? '' },
    filter: {
      when,
      scheduleId,
      scheduleIds: visible(request),
      status: status === 'any' ? null : status === 'cancelled' ? 'cancelled' : 'booked',
      attendance,
      includeCancelled: status === 'any',
      text: errors.q ? null : text,
      from: from === null ? null : dayStart(snapshot, from),
      to: to === null ? null : dayStart(snapshot, to + 1),
    },
    page,
    errors,
  };
}

function listAddress(path: string, values: ListQuery['values'], page?: number): string {
  const params = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ''));
  if (page && page > 1) params.set('page', String(page));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

function bookingListRoute(app: FastifyInstance, { db, clock }: AdminDeps, fixedMail: FixedMailSettings): void {
  app.get('/bookings', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const { values, filter, page: pageNumber, errors } = listQuery(request, snapshot);
    const seen = visible(request);
    const valid = Object.keys(errors).length === 0;
    const { rows, total } = valid
      ? await listBookingsPage(db, filter, { number: pageNumber, size: PAGE_SIZE }, clock())
      : { rows: [], total: 0 };
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const schedules = (await listSchedules(db)).filter((s) => !seen || seen.includes(s.id));
    const first = total === 0 ? 0 : (pageNumber - 1) * PAGE_SIZE + 1;
    return sendPage(
      reply,
      page(
        ctx,
        'Bookings',
        html`${await mailWarning(db, snapshot, fixedMail)}
<form method="get" action="/admin/bookings" class="card row" role="search">
${input('Customer', 'q', values.q, errors, { type: 'search', hint: 'Name, e-mail or phone (digits compared: 01632 960 777 finds 01632960777)' })}
${select(
  'Show',
  'when',
  values.when,
  [
    ['upcoming', 'Upcoming'],
    ['past', 'Past'],
    ['all', 'Any time'],
  ],
  {},
)}
${select('Schedule', 'schedule', values.schedule, [['', 'All schedules'], ...schedules.map((s): [string, string] => [String(s.id), s.name])], {})}
${select('Status', 'status', values.status, STATUS_CHOICES, {})}
${input('From', 'from', values.from, errors, { type: 'date' })}
${input('To', 'to', values.to, errors, { type: 'date' })}
<button>Show</button></form>
<p>${schedules.filter((s) => !s.retiredAt).map((s) => html`<a class="button secondary" href="/admin/schedules/${s.id}/book">Book by hand: ${s.name}</a> `)}</p>
${
  valid
    ? html`<p id="booking-count">${total === 0 ? 'No bookings match.' : `${first}–${first + rows.length - 1} of ${total} booking${total === 1 ? '' : 's'}`}
${total > 0 ? html` · <a class="button secondary" href="${listAddress('/admin/bookings.csv', values)}" download>Export CSV</a>` : ''}</p>
${rows.length ? bookingTable(snapshot, rows) : ''}
${
  pages > 1
    ? html`<nav class="pages" aria-label="Pages">${pageNumber > 1 ? html`<a href="${listAddress('/admin/bookings', values, pageNumber - 1)}" rel="prev">← Previous</a> ` : ''}
<span>Page ${pageNumber} of ${pages}</span>${pageNumber < pages ? html` <a href="${listAddress('/admin/bookings', values, pageNumber + 1)}" rel="next">Next →</a>` : ''}</nav>`
    : ''
}`
    : ''
}`,
        { errors, labels: { q: 'Customer', from: 'From', to: 'To' } },
      ),
      valid ? 200 : 400,
    );
  });

  // every matching booking, not one page: what the office takes into a spreadsheet
  app.get('/bookings.csv', async (request, reply) => {
    const { snapshot } = state(request);
    const { filter, errors } = listQuery(request, snapshot);
    if (Object.keys(errors).length) throw new InvalidInput(Object.values(errors).join(' '));
    const now = clock();
    const csv = await bookingsCsv(db, filter, (instant) => localTime(snapshot, instant), now);
    const name = `bookings-${localTime(snapshot, now).slice(0, 10)}.csv`;
    return reply
      .type('text/csv; charset=utf-8; header=present')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('cache-control', 'no-store')
      .send(csv);
  });
}

/** A booking's details, and cancelling it. */
function bookingDetailsRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.get('/bookings/:details', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const booking = await findBooking(db, (request.params as { details: string }).details, visible(request));
    if (!booking) throw new NotFound('Booking not found');
    const form = snapshot.schedules.get(booking.scheduleId)?.form ?? [];
    const labelOf = (name: string) => form.find((f) => f.name === name)?.label ?? name;
    const q = query(request);
    const history = await bookingHistory(db, booking.id);
    const administrator = visible(request) === null;
    return sendPage(
      reply,
      page(
        ctx,
        `Booking on ${localTime(snapshot, booking.start)}`,
        html`
<section><dl>
<dt>Status</dt><dd id="booking-status">${statusLabel(booking)}${booking.cancelledAt ? ` (cancelled ${localTime(snapshot, booking.cancelledAt)})` : ''}${booking.status === 'booked' && booking.attendanceAt !== null ? ` (marked ${localTime(snapshot, booking.attendanceAt)})` : ''}</dd>
${booking.cancelledBy === 'customer' ? html`<dt>Cancelled by</dt><dd id="cancelled-by">the customer, through the manage link</dd><dt>Customer's reason</dt><dd id="cancel-reason">${booking.cancelReason || '(none given)'}</dd>` : ''}
${booking.movedFrom ? html`<dt>Moved</dt><dd id="moved-from">from ${localTime(snapshot, booking.movedFrom.start)}</dd>` : ''}
<dt>Time</dt><dd>${localTime(snapshot, booking.start)} – ${localTime(snapshot, booking.end).slice(11)} (${snapshot.settings.timezone})</dd>
<dt>Schedule</dt><dd>${administrator ? html`<a href="/admin/schedules/${booking.scheduleId}">${booking.scheduleName}</a>` : booking.scheduleName}</dd>
<dt>Reason</dt><dd>${booking.reasonName}</dd>
<dt>Customer</dt><dd>${customerLink(booking)}
${booking.customerEmail ? html` · ${booking.customerEmail}` : ''}${booking.customerPhone ? html` · ${booking.customerPhone}` : ''}</dd>
<dt>Made</dt><dd>${localTime(snapshot, booking.createdAt)} through the ${SOURCE_LABEL[booking.source] ?? booking.source}</dd>
${booking.overrides.length ? html`<dt>Rules set aside</dt><dd id="booking-overrides"><strong>${booking.overrides.map((o) => STAFF_OVERRIDE_LABELS[o]).join(', ')}</strong> (booked by hand by staff)</dd>` : ''}
${booking.updatedAt !== null ? html`<dt>Last edited</dt><dd id="booking-updated">${localTime(snapshot, booking.updatedAt)} in the admin area</dd>` : ''}
<dt>Reference</dt><dd><code>${booking.detailsId}</code></dd>
</dl></section>
<h2>Answers</h2>
<section>${
          Object.keys(booking.answers).length === 0
            ? html`<p class="muted">None.</p>`
            : html`<table><tbody>
${Object.entries(booking.answers).map(([k, v]) => html`<tr><th>${labelOf(k)}</th><td>${answerValue(v)}</td></tr>`)}</tbody></table>`
        }</section>
<h2>History</h2>
<section id="booking-history">${
          history.length === 0
            ? html`<p class="muted">Nothing recorded (the booking was made before the audit trail began).</p>`
            : html`<ol class="history">${history.map(
                (e) =>
                  html`<li><time>${localTime(snapshot, e.at)}</time> · <strong>${describeEvent(e)}</strong>${e.summary ? html` · ${e.summary}` : ''}</li>`,
              )}</ol>`
        }</section>
<section class="actions" id="booking-actions">
${snapshot.schedules.has(booking.scheduleId) ? html`<a class="button secondary" href="/admin/bookings/${booking.detailsId}/edit">Edit answers</a> ` : ''}
${
  booking.status === 'booked'
    ? html`${snapshot.schedules.has(booking.scheduleId) ? html`<a class="button" href="/admin/bookings/${booking.detailsId}/reschedule">Reschedule</a> ` : ''}<a class="button secondary" href="/admin/bookings/${booking.detailsId}/cancel">Cancel this booking</a>
<p class="muted">Reschedule moves this booking to another free time or reason; the customer is e-mailed the change. Editing changes what the customer answered, not the time. Cancelling frees the time at once; the customer is e-mailed a cancellation.</p>
${attendanceForm(ctx, booking, clock())}`
    : html`<a class="button secondary" href="/admin/bookings/${booking.detailsId}/restore">Undo cancellation</a>
<p class="muted">Undoing books the same time again if it is still free; the customer is e-mailed a new confirmation.</p>`
}</section>`,
        {
          flash:
            q.saved && q.saved in STATUS_FLASHES
              ? STATUS_FLASHES[q.saved]
              : q.saved === 'cancelled'
                ? 'Booking cancelled. The time is free again.'
                : q.saved === 'booked'
                  ? 'Booked.'
                  : q.saved === 'edited'
                    ? 'Answers saved.'
                    : undefined,
        },
      ),
    );
  });

  const editPage = async (request: FastifyRequest, booking: BookingRow, values: Record<string, string>, errors: Errors) => {
    const { page: ctx, snapshot } = state(request);
    const fields = publicFields(snapshot.schedules.get(booking.scheduleId)?.form ?? []);
    const labels = Object.fromEntries(fields.map((f) => [`answer.${f.name}`, f.label]));
    return page(
      ctx,
      `Edit answers: booking on ${localTime(snapshot, booking.start)}`,
      html`<p>${booking.scheduleName}, ${booking.reasonName}. The time stays as it is; the answers are checked by the schedule's form rules, as when the customer books.
Where e-mails go is the customer's address: ${booking.customerVisible ? html`<a href="/admin/customers/${booking.customerId}">edit it on the customer's page</a>` : 'an administrator can change it (the customer also books another schedule)'}.</p>
<form method="post" action="/admin/bookings/${booking.detailsId}/edit" class="card" novalidate>${csrfField(ctx)}
${answerInputs(fields, values, errors)}
<button>Save answers</button> <a class="button secondary" href="/admin/bookings/${booking.detailsId}">Back, change nothing</a></form>`,
      { errors, labels },
    );
  };

  app.get('/bookings/:details/edit', async (request, reply) => {
    const booking = await findBooking(db, (request.params as { details: string }).details, visible(request));
    if (!booking) throw new NotFound('Booking not found');
    const values = Object.fromEntries(
      Object.entries(booking.answers).map(([name, v]) => [`answer.${name}`, v === true ? 'on' : v === false ? '' : String(v)]),
    );
    return sendPage(reply, await editPage(request, booking, values, {}));
  });

  app.post('/bookings/:details/edit', async (request, reply) => {
    const { snapshot } = state(request);
    const booking = await findBooking(db, (request.params as { details: string }).details, visible(request));
    if (!booking) throw new NotFound('Booking not found');
    const raw = body(request);
    const values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const form = snapshot.schedules.get(booking.scheduleId)?.form ?? [];
    const submission = submissionOf(form, values);
    // every field's problem at once (the use-case stops at the first)
    const problems: Record<string, string> = {};
    for (const field of publicFields(form)) {
      const checked = validateSubmission([field], submission);
      if (!checked.ok) problems[`answer.${checked.field}`] = humanReason(checked.message);
    }
    if (Object.keys(problems).length) return sendPage(reply, await editPage(request, booking, values, problems), 400);
    try {
      await editBookingAnswers(db, snapshot, booking.detailsId, submission, clock(), actor(request));
    } catch (error) {
      if (error instanceof InvalidInput)
        return sendPage(reply, await editPage(request, booking, values, { [`answer.${error.path}`]: humanReason(error.reason) }), 400);
      throw error;
    }
    return reply.redirect(`/admin/bookings/${encodeURIComponent(booking.detailsId)}?saved=edited`, 303);
  });

  app.get('/bookings/:details/cancel', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const booking = await findBooking(db, (request.params as { details: string }).details, visible(request));
    if (!booking) throw new NotFound('Booking not found');
    const back = `/admin/bookings/${encodeURIComponent(booking.detailsId)}`;
    if (booking.status !== 'booked') return reply.redirect(back, 303);
    const who = booking.customerName || booking.customerEmail || `Customer ${booking.customerId}`;
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Cancel this booking?',
        html`<p>The booking of <strong>${who}</strong> on <strong>${localTime(snapshot, booking.start)}</strong> (${booking.scheduleName}, ${booking.reasonName}) will be cancelled:</p>
<ul><li>the time becomes free at once, for the API and for booking by hand;</li>
<li>${booking.customerEmail ? html`the customer is e-mailed a cancellation at <strong>${booking.customerEmail}</strong>;` : 'the customer has no e-mail address: tell them yourself;'}</li>
<li>the booking stays in the list and in the customer's history, marked cancelled. "Undo cancellation" on its page books it again while the time is still free (the customer is then e-mailed a new confirmation).</li></ul>`,
        `${back}/cancel`,
        'Confirm cancellation',
        back,
      ),
    );
  });

  app.post('/bookings/:details/cancel', async (request, reply) => {
    const detailsId = (request.params as { details: string }).details;
    if (!(await findBooking(db, detailsId, visible(request)))) throw new NotFound('Booking not found');
    if (!(await cancelBooking(db, detailsId, clock(), actor(request)))) {
      // sent twice (Back, a double click): already cancelled is the outcome asked for
      const booking = await findBooking(db, detailsId);
      if (booking?.status !== 'cancelled') throw new NotFound('Booking not found');
    }
    return reply.redirect(`/admin/bookings/${encodeURIComponent(detailsId)}?saved=cancelled`, 303);
  });
}

const STATUS_FLASHES: Record<string, string> = {
  moved: 'Rescheduled. The customer is e-mailed the new time.',
  unmoved: 'Nothing changed: the booking already is at that time.',
  restored: 'Cancellation undone: booked again. The customer is e-mailed a new confirmation.',
  completed: 'Marked completed.',
  no_show: 'Marked no-show.',
  unmarked: 'Mark cleared.',
};

/** Whether the customer came: once the appointment has begun (the time stays taken either way). */
function attendanceForm(ctx: PageContext, booking: BookingRow, now: number): Markup {
  if (booking.start > now)
    return html`<p class="muted" id="attendance-note">Completed or no-show can be marked from the appointment's start.</p>`;
  return html`<form method="post" action="/admin/bookings/${booking.detailsId}/attendance" class="row" id="attendance">${csrfField(ctx)}
${(['completed', 'no_show'] as const).filter((a) => a !== booking.attendance).map((a) => html`<button class="secondary" name="attendance" value="${a}">Mark ${ATTENDANCE_LABELS[a]}</button> `)}
${booking.attendance ? html`<button class="secondary" name="attendance" value="">Clear the mark</button>` : ''}</form>`;
}

function answerInputs(fields: readonly FormField[], values: Record<string, string>, errors: Errors): Markup {
  return html`${fields.map((f) => {
    const name = `answer.${f.name}`;
    const label = `${f.label}${f.required ? ' *' : ''}`;
    if (f.formType === 'checkbox') return checkbox(label, name, values[name] === 'on', errors);
    if (f.formType === 'textarea') return textarea(label, name, values[name] ?? f.value, errors);
    if (f.formType === 'select')
      return select(label, name, values[name] ?? f.value, [['', '(choose)'], ...f.options.map((o): [string, string] => [o, o])], errors);
    return input(label, name, values[name] ?? f.value, errors, {
      type: f.inputType === 'date' ? 'date' : f.inputType === 'number' ? 'text' : f.inputType,
    });
  })}`;
}

const OVERRIDE_HINTS: Record<StaffOverride, string> = {
  notice: 'Ignore the minimum notice: book a time sooner than customers may (never in the past).',
  horizon: 'Ignore the horizon: book further ahead than customers may.',
  hours: 'Book outside the opening hours (any start time on the grid, closed dates too).',
  capacity: 'Book over capacity: the time may already be full. Only then is a double booking made.',
};

const overridesOf = (values: Record<string, string>): StaffOverride[] => STAFF_OVERRIDES.filter((o) => values[`override.${o}`] === 'on');

/** The details of an existing customer put into the form's name, e-mail and phone fields, where it has them. */
function withCustomer(
  values: Record<string, string>,
  form: readonly FormField[],
  c: { firstName: string; lastName: string; email: string | null; phone: string },
) {
  const filled = { ...values };
  const names = new Set(publicFields(form).map((f) => f.name));
  const put = (name: string, value: string) => {
    if (names.has(name)) filled[`answer.${name}`] = value;
  };
  put('first_name', c.firstName);
  put('last_name', c.lastName);
  put('email', c.email ?? '');
  put('phone', c.phone);
  return filled;
}

async function customerPicker(db: AdminDeps['db'], values: Record<string, string>, seen: readonly number[] | null): Promise<Markup> {
  const search = values.customer_q ?? '';
  const found = values.find && search.trim() ? await listCustomers(db, search, 20, seen) : null;
  return html`<div class="card" id="customer-picker"><h2>Customer</h2>
<div class="row">${input('Find customer', 'customer_q', search, {}, { type: 'search', hint: 'An existing customer, by name, e-mail or phone: their details fill the form.' })}
<button class="secondary" name="find" value="1" formnovalidate>Find customer</button></div>
${
  found === null
    ? ''
    : found.filter((c) => c.erasedAt === null).length === 0
      ? html`<p class="muted">No customer matches "${search}".</p>`
      : html`<ul class="picks">${found
          .filter((c) => c.erasedAt === null)
          .map(
            (c) =>
              html`<li><button class="secondary" name="use_customer" value="${c.id}" formnovalidate>Use ${c.name || c.email || `Customer ${c.id}`}</button> <span class="muted">${c.email ?? ''} ${c.phone}</span></li>`,
          )}</ul>`
}</div>`;
}

async function bookPage(
  { db, clock, snapshots }: AdminDeps,
  request: FastifyRequest,
  scheduleId: number,
  values: Record<string, string>,
  errors: Errors,
  once: string,
): Promise<string> {
  const { page: ctx } = state(request);
  const snapshot = await snapshots.current();
  const schedule = snapshot.schedules.get(scheduleId);
  if (!schedule) throw new NotFound('Schedule not found (or retired)');
  const reasons = [...schedule.reasons.values()];
  const reasonId = idParam(values.reason) ?? reasons[0]?.id ?? null;
  const day = values.day || formatDate(today(snapshot, clock()));
  const overrides = overridesOf(values);
  let slots: readonly { time: string; needsOverride: boolean }[] = [];
  let slotNote = '';
  if (reasonId !== null && schedule.reasons.has(reasonId)) {
    if (overrides.length) {
      const found = await staffSlots(db, snapshot, scheduleId, reasonId, day, clock(), new Set(overrides));
      if (found === null) slotNote = 'This day is outside the booking window, even with the rules ticked set aside.';
      else if (found.length === 0) slotNote = 'No free time on this day, even with the rules ticked set aside.';
      slots = found ?? [];
    } else {
      try {
        slots = (await listSlots(db, snapshot, scheduleId, reasonId, day, clock())).items.map((s) => ({
          time: s.slice(11),
          needsOverride: false,
        }));
        if (slots.length === 0) slotNote = 'No free time on this day.';
      } catch (error) {
        if (!(error instanceof NotFound)) throw error;
        slotNote = 'This day is outside the booking window (notice and horizon).';
      }
    }
  }
  const emailCustomer = values.email_customer === 'on';
  // One form: the reason and day saved are those the page shows. "Show free times" posts it too (nothing is
  // created then), so the answers typed so far are kept; the times listed are those of the reason and day shown.
  return page(
    ctx,
    `Book by hand: ${schedule.name}`,
    html`
${
  reasons.length === 0
    ? html`<p class="alert">This schedule has no reasons yet. <a href="/admin/schedules/${schedule.id}#reasons">Add one</a>.</p>`
    : html`
<form method="post" action="/admin/schedules/${schedule.id}/book" id="book-form">${csrfField(ctx)}${onceField(once)}
<div class="card row">
${select(
  'Reason',
  'reason',
  String(reasonId ?? ''),
  reasons.map((r): [string, string] => [String(r.id), `${r.name} (${r.durationMinutes} min)`]),
  errors,
)}
${input('Day', 'day', day, errors, { type: 'date' })}
<button class="secondary" name="show" value="1" formnovalidate>Show free times</button></div>
<fieldset class="card" id="overrides"><legend>Staff overrides: set a rule aside for this booking</legend>
${STAFF_OVERRIDES.map((o) => checkbox(OVERRIDE_HINTS[o], `override.${o}`, values[`override.${o}`] === 'on'))}
<p class="muted">Customers cannot do this; the booking records the rules set aside, shown in its details and in the lists. Press "Show free times" after changing these.</p>
</fieldset>
<fieldset class="card${errors.time ? ' invalid' : ''}" id="times"><legend>Free times on ${day} for ${schedule.reasons.get(reasonId ?? 0)?.name ?? ''}${overrides.length ? ` (${overrides.map((o) => STAFF_OVERRIDE_LABELS[o]).join(', ')})` : ''}</legend>
${fieldError(errors, 'time')}
${slots.length ? html`<div class="slots">${slots.map((s, i) => html`<label${s.needsOverride ? html` class="override" title="only with the rules set aside"` : ''}><input type="radio" name="time" id="slot-${i}" value="${s.time}"${values.time === s.time ? html` checked` : ''}> ${s.time.slice(0, 5)}${s.needsOverride ? ' *' : ''}</label>`)}</div>${slots.some((s) => s.needsOverride) ? html`<p class="muted">* only with the rules set aside.</p>` : ''}` : html`<p class="muted">${slotNote}</p>`}
<p class="muted stale-note" hidden>The reason or day changed: press "Show free times" to see its free times.</p>
</fieldset>
${await customerPicker(db, values, visible(request))}
<div class="card">
${answerInputs(publicFields(schedule.form), values, errors)}
${checkbox('Send the customer a confirmation', 'email_customer', emailCustomer)}
<p class="muted">Unticked: no message goes to the customer (tell them yourself); the office is notified either way.</p>
<button name="book" value="1">Book</button></div></form>`
}`,
    {
      errors,
      labels: {
        reason: 'Reason',
        day: 'Day',
        time: 'Time',
        ...Object.fromEntries(publicFields(schedule.form).map((f) => [`answer.${f.name}`, f.label])),
      },
    },
  );
}

/** The answers as the API would take them, from the form's `answer.NAME` fields. */
function submissionOf(form: readonly FormField[], values: Record<string, string>): Record<string, unknown> {
  const submission: Record<string, unknown> = {};
  for (const f of publicFields(form)) {
    const v = values[`answer.${f.name}`];
    if (f.formType === 'checkbox') submission[f.name] = v === 'on' ? true : undefined;
    else if (v !== undefined) submission[f.name] = v;
  }
  return submission;
}

const TIME_SHAPE = /^\d{2}:\d{2}(:\d{2})?$/;

/** Booking by hand, for a customer on the phone: pick a reason, a day and a free time, fill in the form. */
function bookByHandRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { db, clock, snapshots } = deps;
  app.get('/schedules/:id/book', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Schedule not found');
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    const q = query(request);
    return sendPage(reply, await bookPage(deps, request, id, { reason: q.reason ?? '', day: q.day ?? '', email_customer: 'on' }, {}, once));
  });

  app.post('/schedules/:id/book', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Schedule not found');
    const raw = body(request);
    let values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const once = values._once ?? '';
    const again = (errors: Errors, status: number) =>
      bookPage(deps, request, id, values, errors, once).then((p) => sendPage(reply, p, status));
    // "Show free times", "Find customer": the same form, nothing created
    if (values.show || values.find) return again({}, 200);
    if (values.use_customer) {
      const customer = await findCustomer(db, idParam(values.use_customer) ?? 0, visible(request));
      const form = (await snapshots.current()).schedules.get(id)?.form ?? [];
      if (customer && customer.erasedAt === null) values = withCustomer(values, form, customer);
      return again({}, 200);
    }
    await checkFormToken(db, once);
    const snapshot = await snapshots.current();
    const schedule = snapshot.schedules.get(id);
    if (!schedule) throw new NotFound('Schedule not found (or retired)');
    const reasonId = idParam(values.reason);
    const reason = reasonId === null ? undefined : schedule.reasons.get(reasonId);
    if (!reason) return again({ reason: 'Choose one of the reasons listed.' }, 400);
    const day = values.day ?? '';
    if (parseDate(day) === null) return again({ day: 'Enter a date (YYYY-MM-DD).' }, 400);
    const time = values.time ?? '';
    if (!TIME_SHAPE.test(time)) return again({ time: 'Choose a free time.' }, 400);
    const slot = `${day} ${time.length === 5 ? `${time}:00` : time}`;
    const now = clock();
    try {
      const created = await createBooking(
        db,
        snapshot,
        {
          scheduleId: id,
          reasonId: reason.id,
          slot,
          submission: submissionOf(schedule.form, values),
          source: 'admin',
          overrides: overridesOf(values),
          emailCustomer: values.email_customer === 'on',
          actor: actor(request),
          visibleSchedules: visible(request),
        },
        now,
        claimFormToken(once, now, (c: { detailsId: string }) => `/admin/bookings/${c.detailsId}`),
      );
      return reply.redirect(`/admin/bookings/${created.detailsId}?saved=booked`, 303);
    } catch (error) {
      if (error instanceof InvalidInput) return again({ [`answer.${error.path}`]: humanReason(error.reason) }, 400);
      if (error instanceof NotFound) {
        // what is saved is what the page shows: a time that is not free for the shown reason and day is refused
        return again(
          {
            time: `${time.slice(0, 5)} on ${day} is not a free time for ${reason.name} (${reason.durationMinutes} min)${overridesOf(values).length ? ', even with the rules ticked set aside' : ''}. The free times for it are listed here: choose one.`,
          },
          409,
        );
      }
      throw error;
    }
  });
}

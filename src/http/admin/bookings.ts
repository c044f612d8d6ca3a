// Bookings: the list (upcoming, past, by schedule and dates), a booking's details, cancelling (the
// calendar is in calendar.ts), and booking by hand for a customer on the phone. Booking and cancelling go
// through src/app/bookings.ts: the same rules and the same transaction as the API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import { listBookings, findBooking, type BookingRow } from '../../app/admin-bookings.js';
import { cancelBooking, createBooking } from '../../app/bookings.js';
import { listSlots } from '../../app/availability.js';
import { listSchedules } from '../../app/admin-schedules.js';
import { text } from './form-input.js';
import { publicFields, type FormField } from '../../core/forms/form-fields.js';
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
} from './layout.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';
import { body, formTokenOfPage, idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';

const SOURCE_LABEL: Record<string, string> = { api: 'API', admin: 'admin area (by hand)' };

function today(snapshot: Snapshot, now: number): number {
  return snapshot.zone ? snapshot.zone.localDayOf(now) : Math.floor(now / DAY_MS);
}

/** The instant a local date starts */
function dayStart(snapshot: Snapshot, day: number): number {
  return snapshot.zone ? snapshot.zone.boundInstant(day, 0) : day * DAY_MS;
}

export function bookingTable(snapshot: Snapshot, rows: readonly BookingRow[], options: { showSchedule?: boolean } = {}): Markup {
  if (rows.length === 0) return html`<p class="muted">No bookings.</p>`;
  return html`<div class="table-wrap"><table class="bookings"><thead><tr><th>When</th>${options.showSchedule !== false ? html`<th>Schedule</th>` : ''}<th>Reason</th><th>Customer</th><th>Made through</th><th>Status</th></tr></thead><tbody>
${rows.map(
  (b) => html`<tr><td><a href="/admin/bookings/${b.detailsId}">${localTime(snapshot, b.start)}</a></td>
${options.showSchedule !== false ? html`<td>${b.scheduleName}</td>` : ''}<td>${b.reasonName}</td>
<td><a href="/admin/customers/${b.customerId}">${b.customerName || b.customerEmail || `Customer ${b.customerId}`}</a></td>
<td>${SOURCE_LABEL[b.source] ?? b.source}</td><td>${b.status}</td></tr>`,
)}
</tbody></table></div>`;
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
}

function bookingListRoute(app: FastifyInstance, { db, clock }: AdminDeps, fixedMail: FixedMailSettings): void {
  app.get('/bookings', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const q = query(request);
    const when = q.when === 'past' ? 'past' : 'upcoming';
    const scheduleId = idParam(q.schedule);
    const from = q.from ? parseDate(q.from) : null;
    const to = q.to ? parseDate(q.to) : null;
    const errors: Record<string, string> = {};
    if (q.from && from === null) errors.from = 'Not a date (YYYY-MM-DD).';
    if (q.to && to === null) errors.to = 'Not a date (YYYY-MM-DD).';
    const includeCancelled = q.cancelled === 'on';
    const rows = await listBookings(
      db,
      {
        when,
        scheduleId,
        includeCancelled,
        from: from === null ? null : dayStart(snapshot, from),
        to: to === null ? null : dayStart(snapshot, to + 1),
      },
      clock(),
    );
    const schedules = await listSchedules(db);
    return sendPage(
      reply,
      page(
        ctx,
        'Bookings',
        html`${await mailWarning(db, snapshot, fixedMail)}
<form method="get" action="/admin/bookings" class="card row">
${select(
  'Show',
  'when',
  when,
  [
    ['upcoming', 'Upcoming'],
    ['past', 'Past'],
  ],
  {},
)}
${select('Schedule', 'schedule', scheduleId === null ? '' : String(scheduleId), [['', 'All schedules'], ...schedules.map((s): [string, string] => [String(s.id), s.name])], {})}
${input('From', 'from', q.from ?? '', errors, { type: 'date' })}
${input('To', 'to', q.to ?? '', errors, { type: 'date' })}
${checkbox('Include cancelled', 'cancelled', includeCancelled)}
<button>Show</button></form>
<p>${schedules.filter((s) => !s.retiredAt).map((s) => html`<a class="button secondary" href="/admin/schedules/${s.id}/book">Book by hand: ${s.name}</a> `)}</p>
${bookingTable(snapshot, rows)}`,
      ),
      Object.keys(errors).length ? 400 : 200,
    );
  });
}

/** A booking's details, and cancelling it. */
function bookingDetailsRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.get('/bookings/:details', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const booking = await findBooking(db, (request.params as { details: string }).details);
    if (!booking) throw new NotFound('Booking not found');
    const form = snapshot.schedules.get(booking.scheduleId)?.form ?? [];
    const labelOf = (name: string) => form.find((f) => f.name === name)?.label ?? name;
    const q = query(request);
    return sendPage(
      reply,
      page(
        ctx,
        `Booking on ${localTime(snapshot, booking.start)}`,
        html`
<section><dl>
<dt>Status</dt><dd id="booking-status">${booking.status}${booking.cancelledAt ? ` (cancelled ${localTime(snapshot, booking.cancelledAt)})` : ''}</dd>
<dt>Time</dt><dd>${localTime(snapshot, booking.start)} – ${localTime(snapshot, booking.end).slice(11)} (${snapshot.settings.timezone})</dd>
<dt>Schedule</dt><dd><a href="/admin/schedules/${booking.scheduleId}">${booking.scheduleName}</a></dd>
<dt>Reason</dt><dd>${booking.reasonName}</dd>
<dt>Customer</dt><dd><a href="/admin/customers/${booking.customerId}">${booking.customerName || booking.customerEmail || `Customer ${booking.customerId}`}</a>
${booking.customerEmail ? html` · ${booking.customerEmail}` : ''}${booking.customerPhone ? html` · ${booking.customerPhone}` : ''}</dd>
<dt>Made</dt><dd>${localTime(snapshot, booking.createdAt)} through the ${SOURCE_LABEL[booking.source] ?? booking.source}</dd>
<dt>Reference</dt><dd><code>${booking.detailsId}</code></dd>
</dl></section>
<h2>Answers</h2>
<section>${
          Object.keys(booking.answers).length === 0
            ? html`<p class="muted">None.</p>`
            : html`<table><tbody>
${Object.entries(booking.answers).map(([k, v]) => html`<tr><th>${labelOf(k)}</th><td>${answerValue(v)}</td></tr>`)}</tbody></table>`
        }</section>
${
  booking.status === 'booked'
    ? html`<section><p class="muted">Cancelling frees the time at once; the customer is e-mailed a cancellation.</p>
<a class="button secondary" href="/admin/bookings/${booking.detailsId}/cancel">Cancel this booking</a></section>`
    : ''
}`,
        { flash: q.saved === 'cancelled' ? 'Booking cancelled. The time is free again.' : q.saved === 'booked' ? 'Booked.' : undefined },
      ),
    );
  });

  app.get('/bookings/:details/cancel', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const booking = await findBooking(db, (request.params as { details: string }).details);
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
<li>the booking stays in the list and in the customer's history, marked cancelled. A cancellation cannot be undone.</li></ul>`,
        `${back}/cancel`,
        'Confirm cancellation',
        back,
      ),
    );
  });

  app.post('/bookings/:details/cancel', async (request, reply) => {
    const detailsId = (request.params as { details: string }).details;
    if (!(await cancelBooking(db, detailsId, clock()))) {
      // sent twice (Back, a double click): already cancelled is the outcome asked for
      const booking = await findBooking(db, detailsId);
      if (booking?.status !== 'cancelled') throw new NotFound('Booking not found');
    }
    return reply.redirect(`/admin/bookings/${encodeURIComponent(detailsId)}?saved=cancelled`, 303);
  });
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
  let slots: readonly string[] = [];
  let slotNote = '';
  if (reasonId !== null && schedule.reasons.has(reasonId)) {
    try {
      slots = (await listSlots(db, snapshot, scheduleId, reasonId, day, clock())).items;
      if (slots.length === 0) slotNote = 'No free time on this day.';
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      slotNote = 'This day is outside the booking window (notice and horizon).';
    }
  }
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
<fieldset class="card${errors.time ? ' invalid' : ''}" id="times"><legend>Free times on ${day} for ${schedule.reasons.get(reasonId ?? 0)?.name ?? ''}</legend>
${fieldError(errors, 'time')}
${slots.length ? html`<div class="slots">${slots.map((s, i) => html`<label><input type="radio" name="time" id="slot-${i}" value="${s.slice(11)}"${values.time === s.slice(11) ? html` checked` : ''}> ${s.slice(11, 16)}</label>`)}</div>` : html`<p class="muted">${slotNote}</p>`}
<p class="muted stale-note" hidden>The reason or day changed: press "Show free times" to see its free times.</p>
</fieldset>
<div class="card"><h2>Customer</h2>
${answerInputs(publicFields(schedule.form), values, errors)}
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
    return sendPage(reply, await bookPage(deps, request, id, { reason: q.reason ?? '', day: q.day ?? '' }, {}, once));
  });

  app.post('/schedules/:id/book', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Schedule not found');
    const raw = body(request);
    const values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const once = values._once ?? '';
    const again = (errors: Errors, status: number) =>
      bookPage(deps, request, id, values, errors, once).then((p) => sendPage(reply, p, status));
    // "Show free times": the same form, nothing created; the time chosen for another reason or day is dropped
    if (values.show) return again({}, 200);
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
        { scheduleId: id, reasonId: reason.id, slot, submission: submissionOf(schedule.form, values), source: 'admin' },
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
            time: `${time.slice(0, 5)} on ${day} is not a free time for ${reason.name} (${reason.durationMinutes} min). The free times for it are listed here: choose one.`,
          },
          409,
        );
      }
      throw error;
    }
  });
}

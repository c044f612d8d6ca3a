// A booking's changes after it was made (docs/admin.md): "Reschedule" (another free time, optionally another
// reason of the schedule), whether the customer came (completed, no-show) and "Undo cancellation". Each POST
// calls one use-case (src/app/reschedule.ts, src/app/booking-status.ts) and answers with a redirect; a refusal
// is a page saying why (409).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Conflict, NotFound } from '../../core/errors.js';
import { findBooking, type BookingRow } from '../../app/admin-bookings.js';
import { freeDaysToMove, freeTimesToMove, rescheduleBooking } from '../../app/reschedule.js';
import { markAttendance, restoreBooking, restoreRefusal } from '../../app/booking-status.js';
import { isAttendance } from '../../core/bookings.js';
import { parseDate } from '../../core/time/calendar.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { confirmPage, csrfField, fieldError, input, page, select, type Errors } from './layout.js';
import { actor, body, idParam, localTime, sendPage, state, query, visible, type AdminDeps } from './context.js';

const TIME_SHAPE = /^\d{2}:\d{2}(:\d{2})?$/;

const detailsAddress = (b: { detailsId: string }) => `/admin/bookings/${encodeURIComponent(b.detailsId)}`;
const whoOf = (b: BookingRow) => b.customerName || b.customerEmail || `Customer ${b.customerId}`;

async function bookingOf(db: AdminDeps['db'], request: FastifyRequest): Promise<BookingRow> {
  // staff: only their schedules' bookings (another's is not found, as on every booking page)
  const booking = await findBooking(db, (request.params as { details: string }).details, visible(request));
  if (!booking) throw new NotFound('Booking not found');
  return booking;
}

export function bookingStatusRoutes(app: FastifyInstance, deps: AdminDeps): void {
  rescheduleRoutes(app, deps);
  attendanceRoute(app, deps);
  restoreRoutes(app, deps);
}

/**
 * One form, as booking by hand: the reason and day moved to are those the page shows. "Show free times" posts
 * it without moving; a time not free for the reason and day shown is refused (409) and the free times listed.
 */
async function reschedulePage(
  deps: AdminDeps,
  request: FastifyRequest,
  booking: BookingRow,
  values: Record<string, string>,
  errors: Errors,
) {
  const { page: ctx } = state(request);
  const snapshot = await deps.snapshots.current();
  const schedule = snapshot.schedules.get(booking.scheduleId);
  if (!schedule) throw new Conflict('Its schedule is retired: this booking cannot be moved. Restore the schedule first.');
  const reasons = [...schedule.reasons.values()];
  const reasonId = idParam(values.reason) ?? booking.reasonId;
  const reason = schedule.reasons.get(reasonId);
  const day = values.day || localTime(snapshot, booking.start).slice(0, 10);
  const times = reason ? await freeTimesToMove(deps.db, snapshot, booking, day, deps.clock(), reason.id) : null;
  // the next days with a free time for the reason shown: links, so finding one needs no JavaScript either
  const nextDays = reason ? (await freeDaysToMove(deps.db, snapshot, booking, deps.clock(), reason.id)).slice(0, 7) : [];
  const current = localTime(snapshot, booking.start);
  const note =
    times === null
      ? reason
        ? 'This day is outside the booking window (notice and horizon).'
        : 'Choose one of the reasons listed.'
      : times.length === 0
        ? 'No free time on this day.'
        : '';
  return page(
    ctx,
    `Reschedule: booking on ${current}`,
    html`<p>${whoOf(booking)}, ${booking.scheduleName}, ${booking.reasonName}, now on <strong>${current}</strong>. The same booking moves
(its customer, answers and reference stay); ${booking.customerEmail ? html`the customer is e-mailed the new time with an updated calendar entry at <strong>${booking.customerEmail}</strong>` : 'the customer has no e-mail address: tell them yourself'}.
The new time meets every rule a customer's booking meets (notice, horizon, hours, capacity, buffers).</p>
<form method="post" action="${detailsAddress(booking)}/reschedule" id="reschedule-form">${csrfField(ctx)}
<div class="card row">
${select(
  'Reason',
  'reason',
  String(reasonId),
  reasons.map((r): [string, string] => [String(r.id), `${r.name} (${r.durationMinutes} min)`]),
  errors,
)}
${input('Day', 'day', day, errors, { type: 'date' })}
<button class="secondary" name="show" value="1" formnovalidate>Show free times</button></div>
${nextDays.length ? html`<p id="free-days">Days with a free time for ${reason?.name ?? ''}: ${nextDays.map((d) => html`<a href="${detailsAddress(booking)}/reschedule?reason=${reasonId}&amp;day=${d}">${d}</a> `)}</p>` : ''}
<fieldset class="card${errors.time ? ' invalid' : ''}" id="times"><legend>Free times on ${day} for ${reason?.name ?? ''}</legend>
${fieldError(errors, 'time')}
${
  times?.length
    ? html`<div class="slots">${times.map((t, i) => {
        const time = t.slot.slice(11);
        const here = t.start === booking.start && reason?.id === booking.reasonId;
        return html`<label><input type="radio" name="time" id="slot-${i}" value="${time}"${values.time === time ? html` checked` : ''}> ${time.slice(0, 5)}${here ? ' (its time now)' : ''}</label>`;
      })}</div>`
    : html`<p class="muted">${note}</p>`
}
<p class="muted stale-note" hidden>The reason or day changed: press "Show free times" to see its free times.</p>
</fieldset>
<div class="row"><button name="move" value="1">Confirm reschedule</button> <a class="button secondary" href="${detailsAddress(booking)}">Back, change nothing</a></div>
</form>`,
    { errors, labels: { reason: 'Reason', day: 'Day', time: 'Time' } },
  );
}

function rescheduleRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const { db, clock, snapshots } = deps;
  app.get('/bookings/:details/reschedule', async (request, reply) => {
    const booking = await bookingOf(db, request);
    if (booking.status !== 'booked') return reply.redirect(detailsAddress(booking), 303);
    const q = query(request);
    return sendPage(reply, await reschedulePage(deps, request, booking, { reason: q.reason ?? '', day: q.day ?? '' }, {}));
  });

  app.post('/bookings/:details/reschedule', async (request, reply) => {
    const booking = await bookingOf(db, request);
    if (booking.status !== 'booked') return reply.redirect(detailsAddress(booking), 303);
    const raw = body(request);
    const values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const again = async (errors: Errors, status: number) =>
      sendPage(reply, await reschedulePage(deps, request, booking, values, errors), status);
    if (values.show) return again({}, 200);
    const snapshot = await snapshots.current();
    const reasonId = idParam(values.reason);
    const reason = reasonId === null ? undefined : snapshot.schedules.get(booking.scheduleId)?.reasons.get(reasonId);
    if (!reason) return again({ reason: 'Choose one of the reasons listed.' }, 400);
    const day = values.day ?? '';
    if (parseDate(day) === null) return again({ day: 'Enter a date (YYYY-MM-DD).' }, 400);
    const time = values.time ?? '';
    if (!TIME_SHAPE.test(time)) return again({ time: 'Choose a free time.' }, 400);
    try {
      const outcome = await rescheduleBooking(
        db,
        snapshot,
        booking.id,
        `${day} ${time.length === 5 ? `${time}:00` : time}`,
        clock(),
        'office',
        reason.id,
        actor(request),
      );
      return reply.redirect(`${detailsAddress(booking)}?saved=${outcome === 'moved' ? 'moved' : 'unmoved'}`, 303);
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      // cancelled meanwhile: the details page says so
      if ((await findBooking(db, booking.detailsId))?.status !== 'booked') return reply.redirect(detailsAddress(booking), 303);
      return again(
        {
          time: `${time.slice(0, 5)} on ${day} is not a free time for ${reason.name} (${reason.durationMinutes} min). The free times for it are listed here: choose one.`,
        },
        409,
      );
    }
  });
}

function attendanceRoute(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.post('/bookings/:details/attendance', async (request, reply) => {
    const booking = await bookingOf(db, request);
    const chosen = text(body(request), 'attendance');
    const attendance = chosen === '' ? null : isAttendance(chosen) ? chosen : undefined;
    if (attendance === undefined) throw new NotFound('No such mark');
    await markAttendance(db, booking.detailsId, attendance, clock(), actor(request));
    return reply.redirect(`${detailsAddress(booking)}?saved=${attendance ?? 'unmarked'}`, 303);
  });
}

function restoreRoutes(app: FastifyInstance, { db, clock, snapshots }: AdminDeps): void {
  const refusedPage = (request: FastifyRequest, booking: BookingRow, why: string) =>
    page(
      state(request).page,
      'The cancellation cannot be undone',
      html`<p class="danger" role="alert">${why}</p><p><a class="button secondary" href="${detailsAddress(booking)}">Back to the booking</a></p>`,
    );

  app.get('/bookings/:details/restore', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const booking = await bookingOf(db, request);
    if (booking.status !== 'cancelled') return reply.redirect(detailsAddress(booking), 303);
    const refused = restoreRefusal(snapshot, booking, clock());
    if (refused) return sendPage(reply, refusedPage(request, booking, refused), 409);
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Undo the cancellation?',
        html`<p>The booking of <strong>${whoOf(booking)}</strong> on <strong>${localTime(snapshot, booking.start)}</strong> (${booking.scheduleName}, ${booking.reasonName}) is booked again, if its time is still free:</p>
<ul><li>the time is taken again; when it was booked meanwhile, or is no longer free by the schedule's rules, nothing changes and you are told;</li>
<li>${booking.customerEmail ? html`the customer is e-mailed a new confirmation at <strong>${booking.customerEmail}</strong> (a cancellation mail not sent yet is not sent);` : 'the customer has no e-mail address: tell them yourself;'}</li>
<li>the booking keeps its reference, customer and answers.</li></ul>`,
        `${detailsAddress(booking)}/restore`,
        'Confirm undo',
        detailsAddress(booking),
      ),
    );
  });

  app.post('/bookings/:details/restore', async (request, reply) => {
    const booking = await bookingOf(db, request);
    try {
      await restoreBooking(db, await snapshots.current(), booking.detailsId, clock(), actor(request));
    } catch (error) {
      if (error instanceof Conflict) return sendPage(reply, refusedPage(request, booking, error.message), 409);
      throw error;
    }
    return reply.redirect(`${detailsAddress(booking)}?saved=restored`, 303);
  });
}

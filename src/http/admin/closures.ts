// Closures: practice-wide closed days (holidays) for every schedule at once (docs/admin.md, "Closures").
// Adding one carries a one-time form token and redirects; removing one asks first. Bookings already inside
// a closure stay booked and are listed under it, to be cancelled one by one if the office wants to.
import type { FastifyInstance } from 'fastify';
import { NotFound, InvalidInput } from '../../core/errors.js';
import { addClosure, listClosures, removeClosure, type Closure } from '../../app/closures.js';
import { listBookings } from '../../app/admin-bookings.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';
import { parseDate, DAY_MS } from '../../core/time/calendar.js';
import type { Snapshot } from '../../app/snapshot.js';
import { html } from './html.js';
import { confirmPage, csrfField, humanReason, input, onceField, page, type Errors } from './layout.js';
import { text } from './form-input.js';
import { bookingTable } from './bookings.js';
import { body, formTokenOfPage, idParam, query, sendPage, state, type AdminDeps } from './context.js';

const dayStart = (snapshot: Snapshot, day: number) => (snapshot.zone ? snapshot.zone.boundInstant(day, 0) : day * DAY_MS);

const describe = (c: Closure) =>
  `${c.firstDay === c.lastDay ? c.firstDay : `${c.firstDay} to ${c.lastDay}`}${c.label ? ` (${c.label})` : ''}`;

export function closureRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  /** booked appointments inside the closure that have not ended: the warning under it */
  const bookedInside = async (snapshot: Snapshot, c: Closure) =>
    listBookings(
      db,
      { when: 'upcoming', from: dayStart(snapshot, parseDate(c.firstDay)!), to: dayStart(snapshot, parseDate(c.lastDay)! + 1), limit: 100 },
      clock(),
    );

  const closuresPage = async (
    request: Parameters<typeof state>[0],
    values: Record<string, string>,
    errors: Errors,
    once: string,
    flash?: string,
  ) => {
    const { page: ctx, snapshot } = state(request);
    const closures = await listClosures(db);
    const sections = await Promise.all(
      closures.map(async (c) => {
        const inside = await bookedInside(snapshot, c);
        return html`<section class="closure" id="closure-${c.id}"><h3>${describe(c)}</h3>
${
  inside.length
    ? html`<p class="warning" role="status"><strong>${inside.length} booking${inside.length === 1 ? ' is' : 's are'} inside this closure</strong> and stay booked: cancel them from their page if the customers should not come.</p>${bookingTable(snapshot, inside)}`
    : ''
}<p><a class="button secondary" href="/admin/closures/${c.id}/remove">Remove…</a></p></section>`;
      }),
    );
    return page(
      ctx,
      'Closures',
      html`<p>Days the whole practice is closed (holidays): every schedule shows no free times on them, whatever its hours and exceptions say. Bookings already made on them stay booked and are listed here.</p>
<form method="post" action="/admin/closures" class="card row">${csrfField(ctx)}${onceField(once)}
${input('First day', 'first_day', values.first_day ?? '', errors, { type: 'date', required: true })}
${input('Last day', 'last_day', values.last_day ?? '', errors, { type: 'date', hint: 'Empty: the first day only' })}
${input('Label', 'label', values.label ?? '', errors, { placeholder: 'Christmas' })}
<button>Add closure</button></form>
${closures.length ? sections : html`<p class="muted">No closures.</p>`}`,
      { errors, labels: { first_day: 'First day', last_day: 'Last day', label: 'Label' }, flash },
    );
  };

  app.get('/closures', async (request, reply) => {
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    const saved = query(request).saved;
    const flash =
      saved === 'added' ? 'Closure added: no free times on those days from now on.' : saved === 'removed' ? 'Closure removed.' : undefined;
    return sendPage(reply, await closuresPage(request, {}, {}, once, flash));
  });

  app.post('/closures', async (request, reply) => {
    const form = body(request);
    const once = text(form, '_once');
    await checkFormToken(db, once);
    const values = { first_day: text(form, 'first_day').trim(), last_day: text(form, 'last_day').trim(), label: text(form, 'label') };
    const now = clock();
    try {
      const id = await addClosure(
        db,
        { firstDay: values.first_day, lastDay: values.last_day, label: values.label },
        now,
        claimFormToken(once, now, (created: number) => `/admin/closures#closure-${created}`),
      );
      return reply.redirect(`/admin/closures?saved=added#closure-${id}`, 303);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(reply, await closuresPage(request, values, { [error.path ?? 'first_day']: humanReason(error.reason) }, once), 400);
    }
  });

  const findClosure = async (id: string | undefined) => {
    const closureId = idParam(id);
    const closure = (await listClosures(db)).find((c) => c.id === closureId);
    if (!closure) throw new NotFound('Closure not found');
    return closure;
  };

  app.get('/closures/:id/remove', async (request, reply) => {
    const { page: ctx } = state(request);
    const closure = await findClosure((request.params as { id?: string }).id);
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Remove this closure?',
        html`<p>The closure <strong>${describe(closure)}</strong> will be removed: every schedule's usual hours and exceptions apply on those days again, and customers can book them through the API on the next request.</p>`,
        `/admin/closures/${closure.id}/remove`,
        'Confirm removal',
        '/admin/closures',
      ),
    );
  });

  app.post('/closures/:id/remove', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    // removed twice (Back, a double click): gone is the outcome asked for
    if (id !== null) await removeClosure(db, id);
    return reply.redirect('/admin/closures?saved=removed', 303);
  });
}

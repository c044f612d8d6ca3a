// Webhooks: the endpoints (add, enable/disable, remove with a confirmation), each endpoint's recent
// deliveries with their state, and "Resend" per delivery (docs/webhooks.md). Adding redirects to a page that
// shows the new signing secret once: the first GET of it takes the secret (one UPDATE), every later one says
// it was shown, so a reload, the back button or another tab never shows it again.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import { WEBHOOK_EVENTS, webhookEventList } from '../../core/webhooks.js';
import {
  addWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  resendWebhookDelivery,
  setWebhookEnabled,
  takeWebhookSecret,
  webhookDeliveries,
} from '../../app/webhooks.js';
import { text } from './form-input.js';
import { html, type Markup } from './html.js';
import { checkbox, csrfField, fieldError, input, onceField, page, type Errors } from './layout.js';
import { body, formTokenOfPage, idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';

const FLASHES: Record<string, string> = {
  removed: 'Webhook endpoint removed.',
  enabled: 'The endpoint is enabled: new events are sent to it, and waiting deliveries go out.',
  disabled: 'The endpoint is disabled: it gets no new events; deliveries already queued wait until it is enabled again.',
  resent: 'The delivery will be sent again at once, with the same event id.',
};

/** The form field of an event's checkbox: one name per event, since a name sent twice is refused. */
const eventField = (event: string) => `event_${event.replace('.', '_')}`;

const endpointIdOf = (request: FastifyRequest) => {
  const id = idParam((request.params as { id?: string }).id);
  if (id === null) throw new NotFound('No such webhook endpoint');
  return id;
};

export async function webhookRoutes(app: FastifyInstance, { db, clock }: AdminDeps): Promise<void> {
  async function listPage(
    request: FastifyRequest,
    values: Record<string, string>,
    chosen: readonly string[],
    errors: Errors,
    once: string,
    flash?: string,
  ) {
    const { page: ctx, snapshot } = state(request);
    const endpoints = await listWebhookEndpoints(db);
    return page(
      ctx,
      'Webhooks',
      html`<p>Each booking created (through the API or here) and each cancellation is sent as a signed JSON POST to the endpoints subscribed to it, retried for at least 24 hours. See docs/webhooks.md for the payload and how a receiver verifies the signature.</p>
${
  endpoints.length === 0
    ? html`<p class="muted" id="no-endpoints">No endpoints yet.</p>`
    : html`<div class="table-wrap"><table id="endpoints"><thead><tr><th>Id</th><th>URL</th><th>Events</th><th>State</th><th>Added</th></tr></thead><tbody>
${endpoints.map(
  (e) =>
    html`<tr><td>${e.id}</td><td><a href="/admin/webhooks/${e.id}">${e.url}</a></td><td>${e.events.join(', ')}</td><td>${e.enabled ? 'enabled' : 'disabled'}</td><td>${localTime(snapshot, e.createdAt)}</td></tr>`,
)}
</tbody></table></div>`
}
<h2 id="add">Add an endpoint</h2>
<section><form method="post" action="/admin/webhooks">${csrfField(ctx)}${onceField(once)}
${input('Endpoint URL', 'url', values.url ?? '', errors, {
  type: 'url',
  required: true,
  placeholder: 'https://example.com/booking-events',
  hint: 'https:// (or http:// on your own network). No user name or password in the URL. The signing secret is shown once, on the next page.',
})}
<fieldset${errors.events ? html` class="invalid" aria-describedby="events-error"` : ''}><legend>Events</legend>
${WEBHOOK_EVENTS.map((e) => checkbox(e, eventField(e), chosen.includes(e)))}
<small>booking.rescheduled: a booking moved (manage link or Reschedule); booking.restored: a cancellation undone in the admin area.</small>${fieldError(errors, 'events')}</fieldset>
<button>Add endpoint</button></form></section>`,
      { flash },
    );
  }

  app.get('/webhooks', async (request, reply) => {
    // a one-time token for the add form (in the address, so Back brings the same one): submitted twice, it adds one endpoint
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    const saved = query(request).saved;
    return sendPage(reply, await listPage(request, {}, WEBHOOK_EVENTS, {}, once, saved ? FLASHES[saved] : undefined));
  });

  app.post('/webhooks', async (request, reply) => {
    const form = body(request);
    const once = text(form, '_once');
    await checkFormToken(db, once);
    const url = text(form, 'url').trim();
    const chosen = WEBHOOK_EVENTS.filter((e) => text(form, eventField(e)) !== '');
    const errors: Record<string, string> = {};
    let events: ReturnType<typeof webhookEventList> = [];
    try {
      events = webhookEventList(chosen);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      errors.events = 'Choose at least one event.';
    }
    if (!errors.events) {
      try {
        const now = clock();
        const endpoint = await addWebhookEndpoint(
          db,
          { url, events },
          now,
          false,
          claimFormToken(once, now, (created: number) => `/admin/webhooks/${created}`),
        );
        return reply.redirect(`/admin/webhooks/${endpoint.id}/secret`, 303);
      } catch (error) {
        if (!(error instanceof InvalidInput)) throw error;
        errors.url = `${error.reason.charAt(0).toUpperCase()}${error.reason.slice(1)}.`;
      }
    }
    return sendPage(reply, await listPage(request, { url }, chosen, errors, once), 400);
  });

  app.get('/webhooks/:id/secret', async (request, reply) => {
    const { page: ctx } = state(request);
    const id = endpointIdOf(request);
    const endpoint = await findWebhookEndpoint(db, id);
    const secret = await takeWebhookSecret(db, id);
    return sendPage(
      reply,
      page(
        ctx,
        'Webhook endpoint added',
        html`<section><p>Endpoint ${endpoint.id}: <code>${endpoint.url}</code> (${endpoint.events.join(', ')}).</p>
${
  secret
    ? html`<div class="alert" role="alert"><p><strong>The signing secret. Copy it into the receiver now: it is shown only this once and cannot be read back.</strong></p>
<code class="token" id="webhook-secret">${secret}</code>
<p><button type="button" class="secondary" data-copy="webhook-secret" hidden>Copy secret</button></p></div>`
    : html`<p id="secret-gone">The signing secret was shown once already and cannot be shown again. If it was lost, remove this endpoint and add it again.</p>`
}
<p><a href="/admin/webhooks/${endpoint.id}">Go to the endpoint</a> · <a href="/admin/webhooks">All endpoints</a></p></section>`,
      ),
    );
  });

  function deliveriesTable(request: FastifyRequest, rows: Awaited<ReturnType<typeof webhookDeliveries>>): Markup {
    const { page: ctx, snapshot } = state(request);
    if (rows.length === 0) return html`<p class="muted" id="no-deliveries">No deliveries yet.</p>`;
    return html`<div class="table-wrap"><table id="deliveries"><thead><tr><th>Queued</th><th>Event</th><th>Event id</th><th>State</th><th>Attempts</th><th>Last status</th><th>Last error</th><th>Next attempt</th><th></th></tr></thead><tbody>
${rows.map(
  (d) =>
    html`<tr data-delivery="${d.id}"><td>${localTime(snapshot, d.created_at)}</td><td>${d.event_type}</td><td><code>${d.event_id}</code></td><td class="state">${d.state}</td><td class="attempts">${d.attempts}</td><td>${d.last_status ?? ''}</td><td>${d.last_error ?? ''}</td><td>${d.state === 'queued' || d.state === 'retrying' ? localTime(snapshot, d.next_attempt_at) : ''}</td>
<td>${d.state === 'sending' ? '' : html`<form method="post" action="/admin/webhooks/deliveries/${d.id}/resend" class="inline">${csrfField(ctx)}<button class="secondary">Resend</button></form>`}</td></tr>`,
)}
</tbody></table></div>`;
  }

  app.get('/webhooks/:id', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const endpoint = await findWebhookEndpoint(db, endpointIdOf(request));
    const deliveries = await webhookDeliveries(db, endpoint.id, 50);
    const saved = query(request).saved;
    return sendPage(
      reply,
      page(
        ctx,
        `Webhook endpoint ${endpoint.id}`,
        html`<section><dl><dt>URL</dt><dd><code>${endpoint.url}</code></dd><dt>Events</dt><dd>${endpoint.events.join(', ')}</dd>
<dt>State</dt><dd id="endpoint-state">${endpoint.enabled ? 'enabled' : 'disabled'}</dd><dt>Added</dt><dd>${localTime(snapshot, endpoint.createdAt)}</dd></dl>
<form method="post" action="/admin/webhooks/${endpoint.id}/enabled" class="inline">${csrfField(ctx)}
<input type="hidden" name="enabled" value="${endpoint.enabled ? 'off' : 'on'}"><button class="secondary">${endpoint.enabled ? 'Disable' : 'Enable'}</button></form>
<a class="button secondary" href="/admin/webhooks/${endpoint.id}/remove">Remove…</a></section>
<h2 id="deliveries-heading">Recent deliveries</h2>
<p class="muted">The 50 most recent, newest first. A delivery is retried with growing pauses for at least 24 hours, then marked failed. Resend sends it again with the same event id and body.</p>
${deliveriesTable(request, deliveries)}`,
        { flash: saved ? FLASHES[saved] : undefined },
      ),
    );
  });

  app.post('/webhooks/:id/enabled', async (request, reply) => {
    const id = endpointIdOf(request);
    const enabled = text(body(request), 'enabled') === 'on';
    await setWebhookEnabled(db, id, enabled);
    return reply.redirect(`/admin/webhooks/${id}?saved=${enabled ? 'enabled' : 'disabled'}`, 303);
  });

  // removing asks first, on a page of its own, and says what follows
  app.get('/webhooks/:id/remove', async (request, reply) => {
    const { page: ctx } = state(request);
    const endpoint = await findWebhookEndpoint(db, endpointIdOf(request));
    const waiting = (await webhookDeliveries(db, endpoint.id, 500)).filter((d) => d.state !== 'delivered' && d.state !== 'failed').length;
    return sendPage(
      reply,
      page(
        ctx,
        'Remove webhook endpoint?',
        html`<section class="danger"><p>Remove endpoint ${endpoint.id}, <code>${endpoint.url}</code>? It will get no more events, and its delivery history is deleted${
          waiting ? html`, including <strong>${waiting} ${waiting === 1 ? 'delivery' : 'deliveries'} not yet delivered</strong>` : ''
        }. This cannot be undone.</p>
<form method="post" action="/admin/webhooks/${endpoint.id}/remove" class="inline">${csrfField(ctx)}<button class="delete">Remove endpoint</button></form>
<a class="button secondary" href="/admin/webhooks/${endpoint.id}">Keep it</a></section>`,
      ),
    );
  });

  app.post('/webhooks/:id/remove', async (request, reply) => {
    await removeWebhookEndpoint(db, endpointIdOf(request));
    return reply.redirect('/admin/webhooks?saved=removed', 303);
  });

  app.post('/webhooks/deliveries/:id/resend', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('No such delivery');
    const delivery = await resendWebhookDelivery(db, id, clock());
    return reply.redirect(`/admin/webhooks/${delivery.endpoint_id}?saved=resent`, 303);
  });
}

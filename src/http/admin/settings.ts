// Configuration > General settings: the installation's name, zone and notification address, and
// Interface: the API switch, the token (shown once), the rate limit, the API's base URL.
// Each save goes through src/app/installation.ts (db.write + bumpConfigVersion), so it holds on the
// next request in every process.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput } from '../../core/errors.js';
import { sessionKey } from '../../app/admin-auth.js';
import { generateTokenToShow, saveGeneralSettings, setApiEnabled, setOperatorSetting, takeUnshownToken } from '../../app/installation.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { confirmPage, csrfField, input, page, select, type Errors } from './layout.js';
import { body, formTokenOfPage, query, sendPage, state, type AdminDeps } from './context.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';
import type { InstallationSettings } from '../../core/settings.js';
import { canonicalZoneName, zoneChoices } from '../../core/time/zone-names.js';
import { TimeZone } from '../../core/time/zone.js';
import { formatClock, formatDate } from '../../core/time/calendar.js';
import { listBookings } from '../../app/admin-bookings.js';

const FLASHES: Record<string, string> = {
  general: 'General settings saved.',
  api_on: 'The API is on.',
  api_off: 'The API is off: every /api call now answers 503.',
  rate: 'Rate limit saved.',
};

const capitalized = (reason: string) => reason.charAt(0).toUpperCase() + reason.slice(1);

export function apiBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}/api`;
}

export async function settingsRoutes(app: FastifyInstance, { db, clock }: AdminDeps): Promise<void> {
  const zones = zoneChoices();

  function settingsPage(request: FastifyRequest, values: Record<string, string>, errors: Errors, extra: { flash?: string } = {}): string {
    const { page: ctx, snapshot } = state(request);
    const s: InstallationSettings = snapshot.settings;
    const base = apiBaseUrl(request);
    return page(
      ctx,
      'Configuration',
      html`
<h2 id="general">General settings</h2>
<section><form method="post" action="/admin/settings/general">${csrfField(ctx)}
<div class="grid">
${input('Installation name', 'name', values.name ?? s.name, errors, { required: true })}
${select('Time zone', 'timezone', canonicalZoneName(values.timezone ?? s.timezone), zones, errors)}
${input('Notification e-mail', 'notify_email', values.notify_email ?? s.notifyEmail, errors, { type: 'email', required: true, hint: 'New bookings are announced to this address.' })}
</div>
<h3>Contact details</h3>
<p class="muted">Shown in every e-mail to customers (confirmations, reminders, cancellations), so they can reach you. Each is optional.</p>
<div class="grid">
${input('Phone', 'phone', values.phone ?? s.phone, errors, { type: 'tel', hint: 'E.g. +49 30 1234567.' })}
${input('Address', 'address', values.address ?? s.address, errors, { hint: 'One line, e.g. Hauptstraße 1, 10115 Berlin.' })}
${input('Website', 'website', values.website ?? s.website, errors, { type: 'url', hint: 'Starting with https://.' })}
</div><button>Save general settings</button></form></section>

<h2 id="interface">Interface</h2>
<section>
<form method="post" action="/admin/settings/api">${csrfField(ctx)}
<p>The booking API is <strong id="api-state">${s.apiEnabled ? 'on' : 'off'}</strong>.
${s.apiEnabled ? '' : ' While it is off, every call under /api answers 503 "API disabled".'}</p>
<input type="hidden" name="enabled" value="${s.apiEnabled ? 'off' : 'on'}">
<button${s.apiEnabled ? html` class="secondary"` : ''}>${s.apiEnabled ? 'Switch the API off' : 'Switch the API on'}</button>
</form>

<h3>Access token</h3>
<p>${s.tokenHash ? 'A token exists. It is stored only as a hash and cannot be shown again.' : 'No token has been generated yet.'}</p>
<p class="muted">Generating a new token makes the current one stop working immediately, everywhere: you are asked first.</p>
<p><a class="button secondary" href="/admin/settings/token">Generate a new token</a></p>

<h3>Rate limit</h3>
<form method="post" action="/admin/settings/rate-limit" class="row">${csrfField(ctx)}
${input('Requests per minute per token', 'rate_limit_per_minute', values.rate_limit_per_minute ?? String(s.rateLimitPerMinute), errors, { type: 'number', min: 1, required: true })}
<button>Save rate limit</button></form>

<h3>Address</h3>
<p>Base URL of the API: <code id="api-base-url">${base}</code></p>
<p>Description for client tools: <a href="/api/openapi.json">${base}/openapi.json</a> (OpenAPI 3.1, public).</p>
</section>`,
      {
        flash: extra.flash,
        errors,
        labels: {
          name: 'Installation name',
          timezone: 'Time zone',
          notify_email: 'Notification e-mail',
          phone: 'Phone',
          address: 'Address',
          website: 'Website',
          rate_limit_per_minute: 'Requests per minute per token',
        },
      },
    );
  }

  app.get('/settings', async (request, reply) => {
    const saved = query(request).saved;
    return sendPage(reply, settingsPage(request, {}, {}, { flash: saved ? FLASHES[saved] : undefined }));
  });

  app.post('/settings/general', async (request, reply) => {
    const input = body(request);
    const values = {
      name: text(input, 'name'),
      timezone: text(input, 'timezone'),
      notify_email: text(input, 'notify_email'),
      phone: text(input, 'phone'),
      address: text(input, 'address'),
      website: text(input, 'website'),
    };
    const { page: ctx, snapshot } = state(request);
    // a new zone: every appointment keeps its moment, so its local time can move; asked first, with how many
    const newZone = values.timezone !== snapshot.settings.timezone ? TimeZone.find(values.timezone) : null;
    if (newZone && snapshot.zone && text(input, 'confirm_zone') !== values.timezone) {
      const oldZone = snapshot.zone;
      const upcoming = await listBookings(db, { when: 'upcoming', limit: 10_000 }, clock());
      const local = (zone: TimeZone, instant: number) =>
        `${formatDate(zone.localDayOf(instant))} ${formatClock(zone.localMinuteOf(instant))}`;
      const moved = upcoming.filter((b) => local(oldZone, b.start) !== local(newZone, b.start));
      if (moved.length > 0) {
        return sendPage(
          reply,
          page(
            ctx,
            `Change the time zone to ${canonicalZoneName(values.timezone)}?`,
            html`<section class="confirm"><p>Every appointment keeps its moment: a customer booked for 09:00 in ${canonicalZoneName(snapshot.settings.timezone)} is still expected at that moment. Shown in ${canonicalZoneName(values.timezone)}, <strong id="moved-count">${moved.length} of ${upcoming.length} upcoming appointment${upcoming.length === 1 ? '' : 's'}</strong> move${moved.length === 1 ? 's' : ''} in local time, for example:</p>
<ul>${moved.slice(0, 5).map((b) => html`<li>${local(oldZone, b.start)} becomes ${local(newZone, b.start)} (${b.customerName || b.customerEmail || `customer ${b.customerId}`})</li>`)}</ul>
<p>Opening hours stay as written (09:00 means 09:00 in the new zone), so some of these may now lie outside them.</p>
<form method="post" action="/admin/settings/general" class="row">${csrfField(ctx)}
<input type="hidden" name="name" value="${values.name}"><input type="hidden" name="timezone" value="${values.timezone}">
<input type="hidden" name="notify_email" value="${values.notify_email}"><input type="hidden" name="confirm_zone" value="${values.timezone}">
<input type="hidden" name="phone" value="${values.phone}"><input type="hidden" name="address" value="${values.address}"><input type="hidden" name="website" value="${values.website}">
<button class="delete">Confirm: change the time zone</button><a class="button secondary" href="/admin/settings">Back, change nothing</a></form></section>`,
          ),
        );
      }
    }
    const problems = await saveGeneralSettings(db, {
      name: values.name,
      timezone: values.timezone,
      notifyEmail: values.notify_email,
      phone: values.phone,
      address: values.address,
      website: values.website,
    });
    const errors: Record<string, string> = {};
    if (problems.name) errors.name = capitalized(problems.name.reason);
    if (problems.timezone) errors.timezone = capitalized(problems.timezone.reason);
    if (problems.notifyEmail) errors.notify_email = `Not valid: ${problems.notifyEmail.reason}`;
    for (const key of ['phone', 'address', 'website'] as const) if (problems[key]) errors[key] = capitalized(problems[key].reason);
    if (Object.keys(errors).length) return sendPage(reply, settingsPage(request, values, errors), 400);
    return reply.redirect('/admin/settings?saved=general', 303);
  });

  app.post('/settings/api', async (request, reply) => {
    const enabled = text(body(request), 'enabled') === 'on';
    await setApiEnabled(db, enabled);
    return reply.redirect(`/admin/settings?saved=${enabled ? 'api_on' : 'api_off'}#interface`, 303);
  });

  // Asks first: a new token stops the current one, and with it whatever uses the API with it.
  app.get('/settings/token', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    // confirmed twice (Back to this page and Confirm again), the second would replace the token just shown
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Generate a new API token?',
        snapshot.settings.tokenHash
          ? html`<p>The current token stops working <strong>at once, everywhere</strong>:</p>
<ul><li>your website's booking integration (and any other client of the API) stops working until it is updated with the new token: its calls get 401;</li>
<li>the new token is shown once, on the next page: copy it into the website's configuration straight away.</li></ul>`
          : html`<p>The token is shown once, on the next page: copy it into the website's configuration straight away.</p>`,
        '/admin/settings/token',
        'Confirm: generate a new token',
        '/admin/settings#interface',
        once,
      ),
    );
  });

  // POST/redirect/GET: the token is held on the session row until the page below shows it, once.
  app.post('/settings/token', async (request, reply) => {
    const session = state(request).session!;
    const once = text(body(request), '_once');
    await checkFormToken(db, once);
    const now = clock();
    await generateTokenToShow(
      db,
      { rowKey: sessionKey(session), sessionId: session.sessionId },
      claimFormToken(once, now, () => '/admin/settings#interface'),
    );
    return reply.redirect('/admin/settings/token/new', 303);
  });

  app.get('/settings/token/new', async (request, reply) => {
    const { page: ctx, session } = state(request);
    const token = await takeUnshownToken(db, { rowKey: sessionKey(session!), sessionId: session!.sessionId });
    return sendPage(
      reply,
      page(
        ctx,
        'New API token',
        token
          ? html`<div class="alert" role="alert"><p><strong>Your new token. Copy it now: it is shown only this once and cannot be read back.</strong>
The previous token stopped working immediately: update your website's integration with this one.</p>
<code class="token" id="new-token">${token}</code>
<p><button type="button" class="secondary" data-copy="new-token" hidden>Copy token</button> <span id="copy-status" role="status"></span></p></div>
<p><a href="/admin/settings#interface">Back to the configuration</a></p>`
          : html`<p class="alert" role="status" id="token-already-shown">This token was already shown: for safety it is shown only once and cannot be read back. No new token was generated.</p>
<p>If you did not copy it, generate another one (the current one then stops working): <a href="/admin/settings/token">Generate a new token</a>.</p>
<p><a href="/admin/settings#interface">Back to the configuration</a></p>`,
      ),
    );
  });

  app.post('/settings/rate-limit', async (request, reply) => {
    const value = text(body(request), 'rate_limit_per_minute').trim();
    try {
      await setOperatorSetting(db, 'api.rate_limit_per_minute', value);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(
        reply,
        settingsPage(request, { rate_limit_per_minute: value }, { rate_limit_per_minute: 'Must be a whole number from 1 to 9999999.' }),
        400,
      );
    }
    return reply.redirect('/admin/settings?saved=rate#interface', 303);
  });
}

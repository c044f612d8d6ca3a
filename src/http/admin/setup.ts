// The first page of a new installation: time zone and administrator account, then signed in. Once
// the installation is set up the page only redirects.
import type { FastifyInstance } from 'fastify';
import { InvalidInput } from '../../core/errors.js';
import { signIn, type SignInThrottle } from '../../app/admin-auth.js';
import { setup, isConfigured } from '../../app/installation.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { csrfField, humanReason, input, page, select, type Errors, type PageContext } from './layout.js';
import { canonicalZoneName, zoneChoices } from '../../core/time/zone-names.js';
import { body, sendPage, state, type AdminDeps } from './context.js';
import { setSessionCookie } from './cookies.js';

const zones = zoneChoices();
const LABELS = {
  name: 'Installation name',
  timezone: 'Time zone',
  admin_email: 'Administrator e-mail',
  admin_password: 'Administrator password',
  notify_email: 'Notification e-mail',
};

function setupPage(ctx: PageContext, values: Record<string, string>, errors: Errors): string {
  return page(
    ctx,
    'Set up this installation',
    html`<section><p>Choose the time zone and create the administrator account. This page disappears once the installation is set up.</p>
<form method="post" action="/admin/setup">${csrfField(ctx)}
${input('Installation name', 'name', values.name ?? '', errors, { placeholder: 'Appointments' })}
${select('Time zone', 'timezone', canonicalZoneName(values.timezone ?? 'Europe/Berlin'), zones, errors)}
${values.timezone === undefined ? html`<p class="muted" id="zone-proposal" hidden></p>` : ''}
${input('Administrator e-mail', 'admin_email', values.admin_email ?? '', errors, { type: 'email', required: true, autocomplete: 'username' })}
${input('Administrator password', 'admin_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.' })}
${input('Notification e-mail (new bookings go here)', 'notify_email', values.notify_email ?? '', errors, { type: 'email', hint: 'Empty: the administrator e-mail.' })}
<button>Finish setup</button></form></section>`,
    { errors, labels: LABELS },
  );
}

export function setupRoutes(app: FastifyInstance, { db, clock }: AdminDeps, throttle: SignInThrottle): void {
  app.get('/setup', async (request, reply) => {
    if (await isConfigured(db)) return reply.redirect('/admin', 303);
    return sendPage(reply, setupPage(state(request).page, {}, {}));
  });

  app.post('/setup', async (request, reply) => {
    if (await isConfigured(db)) return reply.redirect('/admin', 303);
    const input = body(request);
    const values = {
      name: text(input, 'name'),
      timezone: text(input, 'timezone'),
      admin_email: text(input, 'admin_email'),
      notify_email: text(input, 'notify_email'),
    };
    try {
      await setup(
        db,
        {
          timezone: values.timezone,
          adminEmail: values.admin_email,
          adminPassword: text(input, 'admin_password'),
          name: values.name || undefined,
          notifyEmail: values.notify_email.trim() || undefined,
        },
        clock(),
      );
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(reply, setupPage(state(request).page, values, { [error.path ?? 'name']: humanReason(error.reason) }), 400);
    }
    const result = await signIn(db, throttle, values.admin_email, text(input, 'admin_password'), request.ip, clock());
    if (result.ok) setSessionCookie(request, reply, result.cookie);
    return reply.redirect('/admin/schedules', 303);
  });
}

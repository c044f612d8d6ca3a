// The administration area under /admin: server-rendered pages, forms that work without JavaScript.
// Everything here is encapsulated in this plugin (cookies, form parsing, security headers, error
// pages), so the API under /api is untouched: no cookies, no CORS, its own error shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { randomBytes } from 'node:crypto';
import { Conflict, InvalidInput, NotFound } from '../../core/errors.js';
import { SESSION_DAYS, SignInThrottle, checkCsrf, csrfToken, readSession, sessionSecret, signIn, changePassword } from '../../app/admin-auth.js';
import { setup, isConfigured } from '../../app/installation.js';
import { html } from './html.js';
import { ADMIN_CSS, ADMIN_JS, csrfField, input, page, select, type Errors, type PageContext } from './layout.js';
import { body, sendPage, setState, state, type AdminDeps } from './context.js';
import { settingsRoutes } from './settings.js';
import { scheduleRoutes } from './schedules.js';
import { bookingRoutes } from './bookings.js';
import { customerRoutes } from './customers.js';
import { mailRoutes, type FixedMailSettings } from './mail.js';
import { text } from './form-input.js';

export const SESSION_COOKIE = 'admin_session';
/** double-submit token for the forms shown before there is a session (setup, sign-in) */
const PRE_COOKIE = 'admin_pre';
const PUBLIC_PATHS = new Set(['/admin/setup', '/admin/signin', '/admin/assets/admin.css', '/admin/assets/admin.js']);

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

export interface AdminPluginOptions extends AdminDeps {
  throttle?: SignInThrottle;
  /** SMTP_URL and MAIL_FROM of the configuration; default: neither set */
  fixedMail?: FixedMailSettings;
}

export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const { db, clock, snapshots } = options;
  const throttle = options.throttle ?? new SignInThrottle(db);
  let secret: Buffer | null = null;
  const getSecret = async () => (secret ??= await sessionSecret(db));

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 256 * 1024 });

  const secureCookie = (request: FastifyRequest) => request.protocol === 'https';

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });

  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (path.startsWith('/admin/assets/')) return;
    const snapshot = await snapshots.current();
    const configured = snapshot.settings.configured;
    const pageCtx: PageContext = { email: null, csrf: '', installationName: snapshot.settings.name };
    if (!configured && path !== '/admin/setup') return reply.redirect('/admin/setup', 303);
    const session = configured ? await readSession(db, await getSecret(), request.cookies[SESSION_COOKIE], clock()) : null;
    if (!configured) {
      setState(request, { session: null, page: { ...pageCtx, csrf: preToken(request, reply) }, snapshot });
    } else if (!session) {
      if (!PUBLIC_PATHS.has(path) || path === '/admin/setup') return reply.redirect('/admin/signin', 303);
      setState(request, { session: null, page: { ...pageCtx, csrf: preToken(request, reply) }, snapshot });
    } else {
      setState(request, { session, page: { ...pageCtx, email: session.email, csrf: csrfToken(await getSecret(), session) }, snapshot });
    }
    if (request.method === 'POST') {
      const sent = text(body(request), '_csrf');
      const valid = session ? checkCsrf(await getSecret(), session, sent) : sent !== '' && sent === request.cookies[PRE_COOKIE];
      if (!valid) {
        return sendPage(reply, page(state(request).page, 'Form expired', html`<p class="danger">This form was not accepted: it is too old or did not come from this site. Go back, reload the page and send it again.</p>`), 403);
      }
    }
  });

  /** The pre-session CSRF token: kept in an HttpOnly cookie and repeated in the form. */
  function preToken(request: FastifyRequest, reply: FastifyReply): string {
    const existing = request.cookies[PRE_COOKIE];
    if (existing && /^[A-Za-z0-9_-]{22,}$/.test(existing)) return existing;
    const token = randomBytes(18).toString('base64url');
    reply.setCookie(PRE_COOKIE, token, { path: '/admin', httpOnly: true, sameSite: 'strict', secure: secureCookie(request) });
    return token;
  }

  app.setErrorHandler(async (error, request, reply) => {
    const ctx: PageContext = (() => {
      try { return state(request).page; } catch { return { email: null, csrf: '', installationName: 'Administration' }; }
    })();
    if (error instanceof NotFound) return sendPage(reply, page(ctx, 'Not found', html`<p>${error.message}.</p><p><a href="/admin">Back to the start page</a></p>`), 404);
    if (error instanceof Conflict) return sendPage(reply, page(ctx, 'Not possible', html`<p class="danger">${error.message}</p><p><a href="javascript:history.back()">Back</a></p>`), 409);
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status < 500) return sendPage(reply, page(ctx, 'Bad request', html`<p>${(error as Error).message}</p>`), status);
    request.log.error({ err: error }, 'admin request failed');
    return sendPage(reply, page(ctx, 'Something went wrong', html`<p>The request failed. Nothing secret is shown here; see the server log.</p>`), 500);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const ctx: PageContext = { email: null, csrf: '', installationName: 'Administration' };
    return sendPage(reply, page(ctx, 'Not found', html`<p>There is no such page. <a href="/admin">Start page</a></p>`), 404);
  });

  app.get('/assets/admin.css', async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=300').send(ADMIN_CSS));
  app.get('/assets/admin.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(ADMIN_JS));

  // --- setup ------------------------------------------------------------------------------------
  const zones = Intl.supportedValuesOf('timeZone');
  function setupPage(ctx: PageContext, values: Record<string, string>, errors: Errors): string {
    return page(ctx, 'Set up this installation', html`<section><p>Choose the time zone and create the administrator account. This page disappears once the installation is set up.</p>
<form method="post" action="/admin/setup">${csrfField(ctx)}
${input('Installation name', 'name', values.name ?? '', errors, { placeholder: 'Appointments' })}
${select('Time zone', 'timezone', values.timezone ?? 'Europe/Berlin', zones, errors)}
${input('Administrator e-mail', 'admin_email', values.admin_email ?? '', errors, { type: 'email', required: true, autocomplete: 'username' })}
${input('Administrator password', 'admin_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.' })}
${input('Notification e-mail (new bookings go here)', 'notify_email', values.notify_email ?? '', errors, { type: 'email', hint: 'Empty: the administrator e-mail.' })}
<button>Finish setup</button></form></section>`);
  }

  app.get('/setup', async (request, reply) => {
    if (await isConfigured(db)) return reply.redirect('/admin', 303);
    return sendPage(reply, setupPage(state(request).page, {}, {}));
  });

  app.post('/setup', async (request, reply) => {
    if (await isConfigured(db)) return reply.redirect('/admin', 303);
    const input = body(request);
    const values = { name: text(input, 'name'), timezone: text(input, 'timezone'), admin_email: text(input, 'admin_email'), notify_email: text(input, 'notify_email') };
    try {
      await setup(db, {
        timezone: values.timezone, adminEmail: values.admin_email, adminPassword: text(input, 'admin_password'),
        name: values.name || undefined, notifyEmail: values.notify_email.trim() || undefined,
      }, clock());
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(reply, setupPage(state(request).page, values, { [error.field ?? 'name']: error.message }), 400);
    }
    const result = await signIn(db, throttle, values.admin_email, text(input, 'admin_password'), request.ip, clock());
    if (result.ok) setSessionCookie(request, reply, result.cookie);
    return reply.redirect('/admin/schedules', 303);
  });

  // --- sign-in, sign-out, password ---------------------------------------------------------------
  function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string) {
    reply.setCookie(SESSION_COOKIE, value, {
      path: '/admin', httpOnly: true, sameSite: 'lax', secure: secureCookie(request), maxAge: SESSION_DAYS * 86_400,
    });
  }

  function signInPage(ctx: PageContext, email: string, errors: Errors): string {
    return page(ctx, 'Sign in', html`<section><form method="post" action="/admin/signin">${csrfField(ctx)}
${errors.form ? html`<p class="danger" role="alert">${errors.form}</p>` : ''}
${input('E-mail', 'email', email, errors, { type: 'email', required: true, autocomplete: 'username' })}
${input('Password', 'password', '', errors, { type: 'password', required: true, autocomplete: 'current-password' })}
<button>Sign in</button></form></section>`);
  }

  app.get('/signin', async (request, reply) => {
    if (state(request).session) return reply.redirect('/admin', 303);
    return sendPage(reply, signInPage(state(request).page, '', {}));
  });

  app.post('/signin', async (request, reply) => {
    const input = body(request);
    const email = text(input, 'email');
    const result = await signIn(db, throttle, email, text(input, 'password'), request.ip, clock());
    if (!result.ok) {
      const status = result.message.startsWith('Too many') ? 429 : 401;
      return sendPage(reply, signInPage(state(request).page, email, { form: result.message }), status);
    }
    setSessionCookie(request, reply, result.cookie);
    return reply.redirect('/admin', 303);
  });

  app.post('/signout', async (_request, reply) => {
    reply.clearCookie(SESSION_COOKIE, { path: '/admin' });
    return reply.redirect('/admin/signin', 303);
  });

  function passwordPage(ctx: PageContext, errors: Errors, flash?: string): string {
    return page(ctx, 'Change password', html`<section><form method="post" action="/admin/password">${csrfField(ctx)}
${input('Current password', 'current_password', '', errors, { type: 'password', required: true, autocomplete: 'current-password' })}
${input('New password', 'new_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters. Other signed-in browsers are signed out.' })}
${input('New password again', 'repeat_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password' })}
<button>Change password</button></form></section>`, { flash });
  }

  app.get('/password', async (request, reply) => sendPage(reply, passwordPage(state(request).page, {}, (request.query as { saved?: string }).saved ? 'Password changed.' : undefined)));

  app.post('/password', async (request, reply) => {
    const input = body(request);
    try {
      const cookieValue = await changePassword(db, state(request).session!, text(input, 'current_password'), text(input, 'new_password'), text(input, 'repeat_password'), clock());
      setSessionCookie(request, reply, cookieValue);
      return reply.redirect('/admin/password?saved=1', 303);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(reply, passwordPage(state(request).page, { [error.field ?? 'new_password']: error.message }), 400);
    }
  });

  app.get('/', async (_request, reply) => reply.redirect('/admin/bookings', 303));

  const deps: AdminDeps = { db, clock, snapshots };
  await settingsRoutes(app, deps);
  await scheduleRoutes(app, deps);
  await bookingRoutes(app, deps);
  await customerRoutes(app, deps);
  await mailRoutes(app, deps, options.fixedMail ?? { smtpUrl: null, mailFrom: null });
}

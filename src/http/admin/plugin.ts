// The administration area under /admin: server-rendered pages, forms that work without JavaScript.
// Everything here is encapsulated in this plugin (cookies, form parsing, security headers, error
// pages), so the API under /api is untouched: no cookies, no CORS, its own error shape.
import type { FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { SignInThrottle } from '../../app/admin-auth.js';
import { ADMIN_CSS, ADMIN_JS } from './layout.js';
import type { AdminDeps } from './context.js';
import { addSecurityHeaders } from './security-headers.js';
import { ADMIN_BODY_LIMIT, restrictFormBodies } from './form-body.js';
import { guardSessions } from './session-guard.js';
import { errorPages } from './error-pages.js';
import { setupRoutes } from './setup.js';
import { signInRoutes } from './sign-in.js';
import { passwordRoutes } from './password.js';
import { settingsRoutes } from './settings.js';
import { scheduleRoutes } from './schedules.js';
import { bookingRoutes } from './bookings.js';
import { customerRoutes } from './customers.js';
import { mailRoutes, type FixedMailSettings } from './mail.js';
import { webhookRoutes } from './webhooks.js';
import { closureRoutes } from './closures.js';
import { CALENDAR_CSS, calendarRoutes } from './calendar.js';
import { userRoutes } from './users.js';

export interface AdminPluginOptions extends AdminDeps {
  throttle?: SignInThrottle;
  /** SMTP_URL and MAIL_FROM of the configuration; default: neither set */
  fixedMail?: FixedMailSettings;
}

export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const { db, clock, snapshots } = options;
  const deps: AdminDeps = { db, clock, snapshots };
  const throttle = options.throttle ?? new SignInThrottle(db);

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: ADMIN_BODY_LIMIT });
  addSecurityHeaders(app);
  restrictFormBodies(app);
  guardSessions(app, deps);
  errorPages(app);

  app.get('/assets/admin.css', async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(ADMIN_CSS + CALENDAR_CSS),
  );
  app.get('/assets/admin.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(ADMIN_JS),
  );
  setupRoutes(app, deps, throttle);
  signInRoutes(app, deps, throttle);
  passwordRoutes(app, deps, throttle);
  app.get('/', async (_request, reply) => reply.redirect('/admin/bookings', 303));

  await settingsRoutes(app, deps);
  await scheduleRoutes(app, deps);
  await bookingRoutes(app, deps, options.fixedMail ?? { smtpUrl: null, mailFrom: null });
  await customerRoutes(app, deps);
  await mailRoutes(app, deps, options.fixedMail ?? { smtpUrl: null, mailFrom: null });
  await webhookRoutes(app, deps);
  closureRoutes(app, deps);
  calendarRoutes(app, deps);
  userRoutes(app, deps, options.fixedMail?.publicUrl ?? null);
}

// Before every admin handler: send an unconfigured installation to setup and a visitor without a
// session to sign-in, give the handler its request state (session, page context, settings), and
// refuse every POST whose CSRF token does not match the session (or, before one, the signed pre-session
// cookie: the form's token must equal the cookie and carry the server's signature). The session is one
// primary-key read of admin_sessions per request (app/admin-auth.ts readSession).
import type { FastifyInstance } from 'fastify';
import { checkCsrf, csrfToken, readSession, sessionSecret, validPreToken } from '../../app/admin-auth.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { page, type PageContext } from './layout.js';
import { body, sendPage, setState, state, type AdminDeps } from './context.js';
import { PRE_COOKIE, SESSION_COOKIE, preToken } from './cookies.js';
import { accessTo } from './roles.js';

const PUBLIC_PATHS = new Set(['/admin/setup', '/admin/signin', '/admin/assets/admin.css', '/admin/assets/admin.js']);
/** the link an invited user opens before they have an account (app/admin-users.ts) */
const INVITATION_PATH = /^\/admin\/invitation\/[A-Za-z0-9_-]+$/;
const isPublic = (path: string) => PUBLIC_PATHS.has(path) || INVITATION_PATH.test(path);

export function guardSessions(app: FastifyInstance, { db, clock, snapshots }: AdminDeps): void {
  let secret: Buffer | null = null;
  const getSecret = async () => (secret ??= await sessionSecret(db));

  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (path.startsWith('/admin/assets/')) return;
    const snapshot = await snapshots.current();
    const configured = snapshot.settings.configured;
    const pageCtx: PageContext = { email: null, csrf: '', installationName: snapshot.settings.name, path };
    if (!configured && path !== '/admin/setup') return reply.redirect('/admin/setup', 303);
    const session = configured ? await readSession(db, request.cookies[SESSION_COOKIE], clock()) : null;
    if (!configured) {
      setState(request, { session: null, page: { ...pageCtx, csrf: preToken(request, reply, await getSecret()) }, snapshot });
    } else if (!session) {
      if (!isPublic(path) || path === '/admin/setup') return reply.redirect('/admin/signin', 303);
      setState(request, { session: null, page: { ...pageCtx, csrf: preToken(request, reply, await getSecret()) }, snapshot });
    } else {
      setState(request, {
        session,
        page: { ...pageCtx, email: session.email, csrf: csrfToken(await getSecret(), session), session },
        snapshot,
      });
      // the role's guard, before the CSRF check: a page the role may not open is refused alike for GET and POST
      const access = isPublic(path) ? 'allowed' : accessTo(session, path);
      if (access !== 'allowed') {
        const notFound = access === 'not-found';
        return sendPage(
          reply,
          page(
            state(request).page,
            notFound ? 'Not found' : 'Not for your role',
            notFound
              ? html`<p>There is no such page. <a href="/admin/bookings">Back to the bookings</a>.</p>`
              : html`<p class="danger">This page is for administrators. Your account (staff) works with the bookings and customers of your schedules. <a href="/admin/bookings">Back to the bookings</a>.</p>`,
          ),
          notFound ? 404 : 403,
        );
      }
    }
    if (request.method === 'POST') {
      const sent = text(body(request), '_csrf');
      const valid = session
        ? checkCsrf(await getSecret(), session, sent)
        : sent !== '' && sent === request.cookies[PRE_COOKIE] && validPreToken(await getSecret(), sent);
      if (!valid) {
        return sendPage(
          reply,
          page(
            state(request).page,
            'Form expired',
            html`<p class="danger">This form was not accepted: it is too old or did not come from this site. Go back, reload the page and send it again.</p>`,
          ),
          403,
        );
      }
    }
  });
}

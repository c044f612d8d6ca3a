// Signing in (counted by the sign-in throttle) and out (the session row is deleted).
import type { FastifyInstance } from 'fastify';
import { endSession, signIn, type SignInThrottle } from '../../app/admin-auth.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { csrfField, input, page, type Errors, type PageContext } from './layout.js';
import { body, sendPage, state, type AdminDeps } from './context.js';
import { SESSION_COOKIE, clearSessionCookie, setSessionCookie } from './cookies.js';

function signInPage(ctx: PageContext, email: string, errors: Errors): string {
  return page(
    ctx,
    'Sign in',
    html`<section><form method="post" action="/admin/signin">${csrfField(ctx)}
${errors.form ? html`<p class="danger" role="alert">${errors.form}</p>` : ''}
${input('E-mail', 'email', email, errors, { type: 'email', required: true, autocomplete: 'username' })}
${input('Password', 'password', '', errors, { type: 'password', required: true, autocomplete: 'current-password' })}
<button>Sign in</button></form></section>`,
  );
}

export function signInRoutes(app: FastifyInstance, { db, clock }: AdminDeps, throttle: SignInThrottle): void {
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

  app.post('/signout', async (request, reply) => {
    // the session ends on the server: a copy of the cookie kept elsewhere is worth nothing from now on
    await endSession(db, request.cookies[SESSION_COOKIE]);
    clearSessionCookie(reply);
    return reply.redirect('/admin/signin', 303);
  });
}

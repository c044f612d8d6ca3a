// The signed-in admin changes the password; this browser gets a new session, every other session ends.
// The current-password check is throttled like a sign-in (same counts).
import type { FastifyInstance } from 'fastify';
import { InvalidInput } from '../../core/errors.js';
import { changePassword, TooManyAttempts, type SignInThrottle } from '../../app/admin-auth.js';
import { text } from './form-input.js';
import { html } from './html.js';
import { csrfField, input, page, type Errors, type PageContext } from './layout.js';
import { body, query, sendPage, state, type AdminDeps } from './context.js';
import { setSessionCookie } from './cookies.js';

function passwordPage(ctx: PageContext, errors: Errors, flash?: string): string {
  return page(
    ctx,
    'Change password',
    html`<section><form method="post" action="/admin/password">${csrfField(ctx)}
${input('Current password', 'current_password', '', errors, { type: 'password', required: true, autocomplete: 'current-password' })}
${input('New password', 'new_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters. Other signed-in browsers are signed out.' })}
${input('New password again', 'repeat_password', '', errors, { type: 'password', required: true, autocomplete: 'new-password' })}
<button>Change password</button></form></section>`,
    {
      flash,
      errors,
      labels: { current_password: 'Current password', new_password: 'New password', repeat_password: 'New password again' },
    },
  );
}

export function passwordRoutes(app: FastifyInstance, { db, clock }: AdminDeps, throttle: SignInThrottle): void {
  app.get('/password', async (request, reply) =>
    sendPage(reply, passwordPage(state(request).page, {}, query(request).saved ? 'Password changed.' : undefined)),
  );

  app.post('/password', async (request, reply) => {
    const input = body(request);
    try {
      const cookieValue = await changePassword(
        db,
        throttle,
        state(request).session!,
        { current: text(input, 'current_password'), next: text(input, 'new_password'), repeat: text(input, 'repeat_password') },
        request.ip,
        clock(),
      );
      setSessionCookie(request, reply, cookieValue);
      return reply.redirect('/admin/password?saved=1', 303);
    } catch (error) {
      if (error instanceof TooManyAttempts)
        return sendPage(reply, passwordPage(state(request).page, { current_password: error.message }), 429);
      if (!(error instanceof InvalidInput)) throw error;
      return sendPage(reply, passwordPage(state(request).page, { [error.path ?? 'new_password']: error.message }), 400);
    }
  });
}

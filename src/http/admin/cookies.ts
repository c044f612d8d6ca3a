// The admin area's two cookies, both HttpOnly and limited to /admin: the session id (the session itself
// is a database row, app/admin-auth.ts), and before there is one, the signed CSRF token of the setup and
// sign-in forms.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_DAYS, newPreToken, validPreToken } from '../../app/admin-auth.js';

export const SESSION_COOKIE = 'admin_session';
/** double-submit token for the forms shown before there is a session (setup, sign-in) */
export const PRE_COOKIE = 'admin_pre';

const secureCookie = (request: FastifyRequest) => request.protocol === 'https';

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.setCookie(SESSION_COOKIE, value, {
    path: '/admin',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookie(request),
    maxAge: SESSION_DAYS * 86_400,
  });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/admin' });
}

/** The pre-session CSRF token: issued and signed by the server, kept in an HttpOnly cookie and repeated in the form. */
export function preToken(request: FastifyRequest, reply: FastifyReply, secret: Buffer): string {
  const existing = request.cookies[PRE_COOKIE];
  if (validPreToken(secret, existing)) return existing;
  const token = newPreToken(secret);
  reply.setCookie(PRE_COOKIE, token, { path: '/admin', httpOnly: true, sameSite: 'strict', secure: secureCookie(request) });
  return token;
}

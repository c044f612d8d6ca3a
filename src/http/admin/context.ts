// What every admin route gets: the database, the clock, the cached settings, and per request the
// signed-in admin with the CSRF token of the session.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/connect.js';
import type { SnapshotCache, Snapshot } from '../../app/snapshot.js';
import type { Session } from '../../app/admin-auth.js';
import type { FormInput } from './form-input.js';
import { formatClock, formatDate } from '../../core/time/calendar.js';
import { isFormToken, newFormToken } from '../../app/form-tokens.js';
import type { PageContext } from './layout.js';
import { actorOf, visibleSchedules } from '../../app/admin-users.js';
import type { Actor } from '../../app/audit.js';

export interface AdminDeps {
  db: Db;
  clock: () => number;
  snapshots: SnapshotCache;
}

export interface RequestState {
  session: Session | null;
  page: PageContext;
  snapshot: Snapshot;
}

const states = new WeakMap<FastifyRequest, RequestState>();
export const setState = (request: FastifyRequest, state: RequestState) => states.set(request, state);
export function state(request: FastifyRequest): RequestState {
  const s = states.get(request);
  if (!s) throw new Error('admin request state missing');
  return s;
}

export const body = (request: FastifyRequest): FormInput => (request.body ?? {}) as FormInput;
export const query = (request: FastifyRequest) => (request.query ?? {}) as Record<string, string | undefined>;

export function sendPage(reply: FastifyReply, markup: string, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(markup);
}

/** "2026-06-01 09:30" in the installation's zone */
export function localTime(snapshot: Snapshot, instant: number): string {
  const zone = snapshot.zone;
  if (!zone) return new Date(instant).toISOString();
  return `${formatDate(zone.localDayOf(instant))} ${formatClock(zone.localMinuteOf(instant))}`;
}

/** A positive id from a URL segment, or null */
export { idParam } from '../id-param.js';

/**
 * The one-time token of the creating form on this page, carried in its address (`form=`): a page without
 * one is redirected to itself with a fresh one. So Back after a submission returns to the same address and
 * the same token (browsers fetch a no-store page again on Back), and the resubmission is recognised.
 * Returns null when the redirect was sent.
 */
export function formTokenOfPage(request: FastifyRequest, reply: FastifyReply): string | null {
  const token = query(request).form;
  if (token !== undefined && isFormToken(token)) return token;
  const url = new URL(request.url, 'http://admin.invalid');
  url.searchParams.set('form', newFormToken());
  void reply.redirect(`${url.pathname}${url.search}`, 303);
  return null;
}

/** The schedules whose bookings and customers the signed-in user may see (null: all, an administrator). */
export function visible(request: FastifyRequest): readonly number[] | null {
  const { session } = state(request);
  return session ? visibleSchedules(session) : [];
}

/** The signed-in user as the audit trail names them. */
export function actor(request: FastifyRequest): Actor {
  const { session } = state(request);
  if (!session) throw new Error('no session: the guard lets no anonymous request reach a change');
  return actorOf(session);
}

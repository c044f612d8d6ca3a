// The answers of the checks every /api call makes before its own (app/api-access.ts decides, in the
// order of docs/decisions.md §1): 503 not configured -> 503 API disabled -> 401 token -> 429 rate limit.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiAccessCheck } from '../../app/api-access.js';
import type { Versions } from '../../app/answer-cache.js';
import type { Snapshot } from '../../app/snapshot.js';
import { idParam } from '../id-param.js';
import { errorHandler } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** the installation as this request sees it, set by the gate */
    snapshot: Snapshot;
    /** the config version and the asked schedule's bookings version, read by the gate in one statement */
    versions: Versions;
  }
}

/** The bearer token of an Authorization header; the scheme name is case-insensitive (RFC 9110). */
export function bearerToken(header: string | undefined): string | null {
  const m = header ? /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return m ? m[1]! : null;
}

/** The schedule a request names in its query (?schedule=), if well formed; validation proper comes later. */
const scheduleAskedFor = (request: FastifyRequest) => idParam((request.query as Record<string, unknown> | undefined)?.schedule);

/**
 * A known /api path asked with a method it does not take: 405 with Allow, else null (a 404). It runs where a
 * 404 would, after the gate: the order of docs/decisions.md §1 holds for every /api request.
 */
export function methodNotAllowed(request: FastifyRequest, reply: FastifyReply, methods: ReadonlyMap<string, readonly string[]>) {
  const query = request.url.indexOf('?');
  const allowed = methods.get(query === -1 ? request.url : request.url.slice(0, query));
  if (allowed === undefined) return null;
  return reply.code(405).header('allow', allowed.join(', ')).send({ error: 'Method Not Allowed' });
}

export function apiGate(checkAccess: ApiAccessCheck) {
  return async function gate(request: FastifyRequest, reply: FastifyReply) {
    const { snapshot, versions, refusal, rate } = await checkAccess(scheduleAskedFor(request), bearerToken(request.headers.authorization));
    request.snapshot = snapshot;
    request.versions = versions;
    // every answer to an accepted token says where its window stands (docs/api-integration.md, "Rate limit")
    if (rate !== undefined) {
      reply.header('ratelimit-limit', rate.limit);
      reply.header('ratelimit-remaining', rate.remaining);
      reply.header('ratelimit-reset', rate.resetSeconds);
    }
    if (refusal === null) return;
    switch (refusal.reason) {
      case 'not configured':
        return reply.code(503).send({ error: 'Not configured' });
      case 'disabled':
        return reply.code(503).send({ error: 'API disabled' });
      case 'unauthorized':
        // RFC 9110 §11.6.1 / RFC 6750 §3: a 401 names the scheme that would be accepted
        return reply.code(401).header('www-authenticate', 'Bearer realm="api"').send({ error: 'Unauthorized' });
      case 'rate limited':
        return reply.code(429).header('retry-after', rate!.resetSeconds).send({ error: 'Too Many Requests' });
    }
  };
}

/** A path under /api (the gate's scope), also when it holds what the router cannot decode. */
export const underApi = (url: string) => /^\/api(\/|\?|$)/.test(url);

/**
 * What no route can take under /api because its path has a broken %-escape (`/api/schedules%zz`): the
 * router refuses it before any hook, but the order of docs/decisions.md §1 holds for every /api request, so
 * the gate answers first (503, 401, 429), and then it is a path that does not exist: 404, whatever the method.
 */
export function unroutableApiRequest(checkAccess: ApiAccessCheck) {
  const gate = apiGate(checkAccess);
  return async function unroutable(request: FastifyRequest, reply: FastifyReply) {
    try {
      await gate(request, reply);
      if (!reply.sent) await reply.code(404).send({ error: 'Not Found' });
    } catch (error) {
      // the database could not answer the gate: the same answer as on a routed request (errors.ts)
      await errorHandler(error as FastifyError, request, reply);
    }
  };
}

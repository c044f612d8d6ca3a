// Checks every /api call makes before its own, in the order of decisions §1:
// not configured -> API disabled -> token (401) -> rate limit (429).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokenMatches } from '../../app/api-token.js';
import type { SnapshotCache, Snapshot } from '../../app/snapshot.js';
import { checkRate, type RateLimitStore } from '../../rate-limit/rate-limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** the installation as this request sees it, set by the gate */
    snapshot: Snapshot;
  }
}

/** The bearer token of an Authorization header; the scheme name is case-insensitive (RFC 9110). */
export function bearerToken(header: string | undefined): string | null {
  const m = header ? /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return m ? m[1]! : null;
}

export function apiGate(snapshots: SnapshotCache, rateLimits: RateLimitStore, clock: () => number) {
  return async function gate(request: FastifyRequest, reply: FastifyReply) {
    const snapshot = await snapshots.current();
    request.snapshot = snapshot;
    const { settings } = snapshot;
    if (!settings.configured) return reply.code(503).send({ error: 'Not configured' });
    if (!settings.apiEnabled) return reply.code(503).send({ error: 'API disabled' });
    const token = bearerToken(request.headers.authorization);
    if (token === null || !tokenMatches(token, settings.tokenHash)) return reply.code(401).send({ error: 'Unauthorized' });
    // keyed by the token's hash: a new token starts a fresh count, and the token itself is never a key
    const decision = await checkRate(rateLimits, `api:${settings.tokenHash}`, settings.rateLimitPerMinute, clock());
    if (!decision.allowed) {
      return reply.code(429).header('retry-after', String(decision.retryAfterSeconds)).send({ error: 'Too Many Requests' });
    }
  };
}

// Checks every /api call makes before its own, in the order of decisions §1:
// not configured -> API disabled -> token (401) -> rate limit (429).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokenMatches } from '../../app/api-token.js';
import type { SnapshotCache, Snapshot } from '../../app/snapshot.js';
import type { Db } from '../../db/connect.js';
import type { Versions } from '../../db/hot-reads.js';
import { checkRate, type RateLimitStore } from '../../rate-limit/rate-limiter.js';
import { idParam } from '../id-param.js';

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

export function apiGate(db: Db, snapshots: SnapshotCache, rateLimits: RateLimitStore, clock: () => number) {
  return async function gate(request: FastifyRequest, reply: FastifyReply) {
    // one read for both versions: every read costs a SQLite read transaction (file-lock system calls),
    // a large share of a fast call; the availability calls check their cached answers against these
    const versions = await db.hot.versions(scheduleAskedFor(request));
    const snapshot = await snapshots.at(versions.config);
    request.snapshot = snapshot;
    request.versions = versions;
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

// The checks every /api call makes before its own, in the order of docs/decisions.md §1: not configured -> API
// disabled -> token (401) -> rate limit (429). One version read per request serves them and the call.
import type { Db } from '../db/connect.js';
import { MemoryRateLimitStore, checkRate, type RateDecision, type RateLimitStore } from '../rate-limit/rate-limiter.js';
import type { Versions } from './answer-cache.js';
import { tokenMatches } from './api-token.js';
import type { Snapshot, SnapshotCache } from './snapshot.js';

export type ApiRefusal =
  | { readonly reason: 'not configured' }
  | { readonly reason: 'disabled' }
  | { readonly reason: 'unauthorized' }
  | { readonly reason: 'rate limited' };

export interface ApiAccess {
  /** the installation as this request sees it */
  readonly snapshot: Snapshot;
  /** the config version and the asked schedule's bookings version, read in one statement */
  readonly versions: Versions;
  /** null when the call may go on */
  readonly refusal: ApiRefusal | null;
  /** the token's rate-limit window, once the token is accepted (its headers go on every such answer) */
  readonly rate?: RateDecision;
}

export interface ApiAccessDeps {
  db: Db;
  snapshots: SnapshotCache;
  /** in-process unless given (Redis, for several instances) */
  rateLimits?: RateLimitStore;
  clock: () => number;
}

const NOT_CONFIGURED: ApiRefusal = { reason: 'not configured' };
const DISABLED: ApiRefusal = { reason: 'disabled' };
const UNAUTHORIZED: ApiRefusal = { reason: 'unauthorized' };
const RATE_LIMITED: ApiRefusal = { reason: 'rate limited' };

/** The check of one request: the schedule its query names (when well formed) and its bearer token. */
export function apiAccessCheck({ db, snapshots, rateLimits = new MemoryRateLimitStore(), clock }: ApiAccessDeps) {
  return async function checkApiAccess(scheduleId: number | null, token: string | null): Promise<ApiAccess> {
    // one read for both versions: every read costs a SQLite read transaction (file-lock system calls),
    // a large share of a fast call; the availability calls check their cached answers against these
    const versions = await db.hot.versions(scheduleId);
    const snapshot = await snapshots.at(versions.config);
    const { settings } = snapshot;
    if (!settings.configured) return { snapshot, versions, refusal: NOT_CONFIGURED };
    if (!settings.apiEnabled) return { snapshot, versions, refusal: DISABLED };
    if (token === null || !tokenMatches(token, settings.tokenHash)) return { snapshot, versions, refusal: UNAUTHORIZED };
    // keyed by the token's hash: a new token starts a fresh count, and the token itself is never a key
    const rate = await checkRate(rateLimits, `api:${settings.tokenHash}`, settings.rateLimitPerMinute, clock());
    return { snapshot, versions, refusal: rate.allowed ? null : RATE_LIMITED, rate };
  };
}

export type ApiAccessCheck = ReturnType<typeof apiAccessCheck>;

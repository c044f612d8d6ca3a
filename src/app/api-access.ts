// The checks every /api call makes before its own, in the order of docs/decisions.md §1: not configured -> API
// disabled -> token (401) -> rate limit (429). One version read per request serves them and the call.
import type { Db } from '../db/connect.js';
import { MemoryRateLimitStore, checkRate, type RateDecision, type RateLimitStore } from '../rate-limit/rate-limiter.js';
import { answerCachesOf, type Versions } from './answer-cache.js';
import { tokenMatches } from './api-token.js';
import { scheduleChangeReach } from './availability.js';
import type { ChangesWanted } from '../db/hot-reads.js';
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

/** How many bookings versions behind the newest answer of a schedule an answer may be to have its changes read with the versions. */
const CHANGES_WITHIN = 100;

/** The check of one request: the schedule its query names (when well formed) and its bearer token. */
export function apiAccessCheck({ db, snapshots, rateLimits = new MemoryRateLimitStore(), clock }: ApiAccessDeps) {
  /**
   * The changes the version read should bring for the schedule asked about: since the oldest of its /days
   * answers held, with the reach of its reasons (from the snapshot at hand: when the configuration changed,
   * every answer is renewed anyway and the changes go unused).
   */
  const changesWanted = (scheduleId: number | null): ChangesWanted | undefined => {
    const snapshot = snapshots.latest();
    const schedule = scheduleId === null ? undefined : snapshot?.schedules.get(scheduleId);
    if (!schedule) return undefined;
    const since = answerCachesOf(db).days.oldestBookingsVersion(schedule.id, snapshot!.version, CHANGES_WITHIN);
    return since === undefined ? undefined : { since, reach: scheduleChangeReach(schedule) };
  };
  return async function checkApiAccess(scheduleId: number | null, token: string | null): Promise<ApiAccess> {
    // one read for both versions: every read costs a SQLite read transaction (file-lock system calls),
    // a large share of a fast call; the availability calls check their cached answers against these
    // only PostgreSQL's version read brings changes (SQLite reads them itself, without a round trip)
    const versions = await db.hot.versions(scheduleId, db.dialect === 'postgres' ? changesWanted(scheduleId) : undefined);
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

// Idempotency keys on POST /bookings (docs/api-integration.md, "Retries and idempotency"). A request with a key
// first claims it: inserting the key's row, in its own short transaction, makes the request its owner (the
// primary key decides between concurrent requests, in one process, across processes on one SQLite file, or
// across instances on one PostgreSQL database). The owner books and records its answer with the key (a 201
// in the booking's own transaction, so a booking and its recorded answer can never disagree). Any other
// request with the key waits for that answer and replays it, or is refused when its body differs.
// Keys are scoped to the installation (one installation = one database): a new token does not forget them.
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Db } from '../db/connect.js';
import type { OnCreated } from './form-tokens.js';
import { completeKey, deleteExpiredKeys, findKey, insertPendingKey, reclaimKey, releaseKey } from '../db/repos/idempotency.repository.js';

/** A key and its answer are kept at least this long (from the first request). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/** A claim without an answer this old was abandoned (its process died between claim and answer): the next request takes it over. */
export const CLAIM_LEASE_MS = 30_000;
/** How long a request waits for another request's answer under the same key before answering 503 (retry later). */
export const WAIT_FOR_OWNER_MS = 10_000;
/** Expired keys are deleted at most this often per process, by the next request that sends a key. */
const PURGE_INTERVAL_MS = 10 * 60_000;

/** 1 to 255 printable ASCII characters (space included; HTTP has already trimmed the ends). */
const KEY_SYNTAX = /^[\x20-\x7e]{1,255}$/;

export const isValidIdempotencyKey = (key: string) => KEY_SYNTAX.test(key);

/** SHA-256 of the parsed JSON body: the same request sent with other whitespace is the same request. */
export const requestHash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

export interface StoredAnswer {
  readonly status: number;
  /** the JSON body exactly as sent */
  readonly body: string;
}

export interface OwnedKey {
  readonly key: string;
  readonly claim: string;
}

export type KeyClaim =
  | ({ readonly kind: 'owner' } & OwnedKey)
  | { readonly kind: 'replay'; readonly answer: StoredAnswer }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'busy' };

/** what Db.write hands its work */
type Transaction = Parameters<Db['lockSchedule']>[0];

const lastPurge = new WeakMap<Db, number>();

async function purgeExpired(db: Db, now: number): Promise<void> {
  if ((lastPurge.get(db) ?? -Infinity) + PURGE_INTERVAL_MS > now) return;
  lastPurge.set(db, now);
  await db.write((trx) => deleteExpiredKeys(trx, now));
}

/**
 * Claims `key` for a request whose body hashes to `hash`, or says what to answer instead: the stored answer
 * (waiting, bounded, while another request owns the key), a refusal when the key came with another body,
 * or 'busy' when the owner has not answered within WAIT_FOR_OWNER_MS.
 */
export async function claimIdempotencyKey(db: Db, key: string, hash: string, clock: () => number): Promise<KeyClaim> {
  await purgeExpired(db, clock());
  // waiting is about real time (another request's progress), not the installation's clock
  const deadline = Date.now() + WAIT_FOR_OWNER_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 100)) {
    const now = clock();
    const claim = randomBytes(12).toString('base64url');
    const expiresAt = now + IDEMPOTENCY_TTL_MS;
    if (await db.write((trx) => insertPendingKey(trx, key, claim, hash, now, expiresAt))) return { kind: 'owner', key, claim };
    const row = await findKey(db.kysely, key);
    // released (a failed owner) between the insert and this read: try to claim it again
    if (!row) continue;
    const abandoned = row.status === null && row.started_at + CLAIM_LEASE_MS <= now;
    if (row.expires_at <= now || abandoned) {
      if (await db.write((trx) => reclaimKey(trx, key, row.claim, claim, hash, now, expiresAt, now - CLAIM_LEASE_MS)))
        return { kind: 'owner', key, claim };
      continue;
    }
    if (row.request_hash !== hash) return { kind: 'mismatch' };
    if (row.status !== null && row.body !== null) return { kind: 'replay', answer: { status: row.status, body: row.body } };
    if (Date.now() + pause > deadline) return { kind: 'busy' };
    await delay(pause);
  }
}

/**
 * The key was taken over while its owner worked (the owner outlived the lease: a paused process, clocks
 * apart): the owner's answer is not recorded, and when thrown inside the booking's transaction the booking
 * is rolled back, so one key never books twice. The caller claims the key again (replay, or busy).
 */
export class KeyTakenOver extends Error {
  constructor() {
    super('the Idempotency-Key was taken over by another request');
    this.name = 'KeyTakenOver';
  }
}

/** Within the booking's transaction: the owner's answer, committed with the booking or not at all. */
export async function recordAnswerIn(trx: Transaction, owned: OwnedKey, answer: StoredAnswer): Promise<void> {
  if (!(await completeKey(trx, owned.key, owned.claim, answer.status, answer.body))) throw new KeyTakenOver();
}

/** What the owner's booking runs in its own transaction: records the 201 it answers with, under the key. */
export function recordingAnswerIn<T>(owned: OwnedKey, answer: (created: T) => StoredAnswer): OnCreated<T> {
  return (trx, created) => recordAnswerIn(trx, owned, answer(created));
}

/** A final answer that did not come from a committed booking (a 400 or 404): stored for replay. */
export async function recordAnswer(db: Db, owned: OwnedKey, answer: StoredAnswer): Promise<void> {
  await db.write((trx) => recordAnswerIn(trx, owned, answer));
}

/**
 * Gives the key up after a failure a retry may not repeat (a 500, the database unreachable): the next
 * request with it tries anew. A key whose booking did commit keeps its 201 (only an unanswered claim is released).
 */
export async function releaseIdempotencyKey(db: Db, owned: OwnedKey): Promise<void> {
  await db.write((trx) => releaseKey(trx, owned.key, owned.claim));
}

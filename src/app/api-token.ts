// The API token (docs/decisions.md §2): 'apm_' + 64 characters of [A-Za-z0-9] from a cryptographic source.
// Only its SHA-256 is stored: the token has ~381 bits of entropy, so a fast hash is enough and keeps
// the per-request check cheap. Comparison is constant-time.
import { createHash, hash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const TOKEN_PREFIX = 'apm_';
export const TOKEN_RE = /^apm_[A-Za-z0-9]{64}$/;

export function newToken(): string {
  let body = '';
  for (let i = 0; i < 64; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return TOKEN_PREFIX + body;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

// The stored hash as bytes, decoded once per token rather than on every request, and the token that last hashed
// to it. Hashing is a native call that cost the busiest reads (issue 13) about a tenth of their throughput, so a
// token already accepted is compared with the token itself: in constant time, as the hash is. The accepted
// token lives only in this process's memory, as it does in every request that carries it; it is never stored,
// logged or used as a key, and a new token (a new stored hash) forgets it.
let stored: { hex: string; bytes: Buffer; accepted: Buffer | null } | null = null;

/** Does the presented token hash to the stored hash? Constant-time in the token's content. */
export function tokenMatches(presented: string, storedHash: string): boolean {
  if (!storedHash) return false;
  if (stored?.hex !== storedHash) stored = { hex: storedHash, bytes: Buffer.from(storedHash, 'hex'), accepted: null };
  const accepted = stored.accepted;
  if (accepted !== null) {
    // only one token hashes to the stored hash (SHA-256 has no known collisions): any other is refused
    const bytes = Buffer.from(presented);
    return bytes.length === accepted.length && timingSafeEqual(bytes, accepted);
  }
  // one call instead of a Hash object per request
  const a = hash('sha256', presented, 'buffer');
  const matches = a.length === stored.bytes.length && timingSafeEqual(a, stored.bytes);
  if (matches) stored.accepted = Buffer.from(presented);
  return matches;
}

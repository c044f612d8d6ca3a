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

// the stored hash as bytes, decoded once per token rather than on every request (issue 13: the check runs on every call)
let stored: { hex: string; bytes: Buffer } | null = null;

/** Does the presented token hash to the stored hash? Constant-time in the token's content. */
export function tokenMatches(presented: string, storedHash: string): boolean {
  if (!storedHash) return false;
  if (stored?.hex !== storedHash) stored = { hex: storedHash, bytes: Buffer.from(storedHash, 'hex') };
  // one call instead of a Hash object per request
  const a = hash('sha256', presented, 'buffer');
  return a.length === stored.bytes.length && timingSafeEqual(a, stored.bytes);
}

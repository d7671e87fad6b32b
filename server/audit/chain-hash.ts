import { createHash, createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';

/*
 * The audit chain's two hashes, with nothing but node:crypto and canonicalize: the offline
 * verifier of evidence records (server/evidence/verify-evidence.ts) recomputes them too.
 */

/** `hmac:` and the base64url HMAC-SHA-256 of `value` under the team's evidence key. */
export function keyedHash(key: Uint8Array, value: string): string {
  return `hmac:${createHmac('sha256', key).update(value).digest('base64url')}`;
}

/** An entry's hash: SHA-256, hex, of the canonical JSON of its place, its predecessor's hash and its sealed form. */
export function chainHash(seq: number, prev: string | null, sealed: Record<string, unknown>): string {
  return createHash('sha256')
    .update(canonicalize({ seq, prev, entry: sealed }) ?? '')
    .digest('hex');
}

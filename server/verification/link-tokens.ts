import { constantTimeEqual, sha256Hex } from '@/server/platform/crypto';
import { randomBase62 } from '@/server/platform/ids';

/**
 * Tokens for links sent by e-mail (the subject's confirmation link, the manager's request). Only
 * the SHA-256 of a token is stored: 190 random bits need no slow hash, and a database leak yields
 * no working link.
 */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBase62(32);
  return { token, hash: sha256Hex(token) };
}

export function linkTokenMatches(token: string, storedHash: string | null): boolean {
  if (!storedHash || token.length === 0 || token.length > 64) return false;
  return constantTimeEqual(sha256Hex(token), storedHash);
}

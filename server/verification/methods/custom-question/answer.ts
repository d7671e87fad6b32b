import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** "  The  Blue Whale " and "the blue whale" are the same answer. */
export function normaliseAnswer(answer: string): string {
  return answer.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Answers to a custom question are often guessable words, so they are stored with a slow salted
 * hash (scrypt), never in a form a database leak could reverse cheaply.
 */
export async function hashAnswer(answer: string): Promise<{ hash: string; salt: string }> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(normaliseAnswer(answer), salt, 32);
  return { hash: hash.toString('base64'), salt: salt.toString('base64') };
}

export async function answerMatches(
  answer: string,
  stored: { hash: string; salt: string },
): Promise<boolean> {
  const candidate = await scryptAsync(normaliseAnswer(answer), Buffer.from(stored.salt, 'base64'), 32);
  const expected = Buffer.from(stored.hash, 'base64');
  return expected.length === candidate.length && timingSafeEqual(candidate, expected);
}

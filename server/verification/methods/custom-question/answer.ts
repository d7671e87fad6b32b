import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/**
 * Runs slow work when its turn comes (a FairLane's `run`): every scrypt below goes through one,
 * so a caller decides whose turn it is and how much may wait (server/platform/fair-queue.ts).
 */
export type SlowWork = <T>(task: () => Promise<T>) => Promise<T>;

/** How a case's (or template's) custom answer is kept: as its salted hash, or sealed until it is hashed. */
export type KeptAnswer = { answer_hash: string; answer_salt: string } | { answer_sealed: string };

/** Keeps a custom answer as a step's settings hold it: hashed now, or sealed for hashing later. */
export type AnswerKeeper = (answer: string) => Promise<KeptAnswer>;

/** "  The  Blue Whale " and "the blue whale" are the same answer. */
export function normaliseAnswer(answer: string): string {
  return answer.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Answers to a custom question are often guessable words, so they are stored with a slow salted
 * hash (scrypt), never in a form a database leak could reverse cheaply.
 */
export async function hashAnswer(answer: string, run: SlowWork): Promise<{ hash: string; salt: string }> {
  const salt = randomBytes(16);
  const hash = await run(() => scryptAsync(normaliseAnswer(answer), salt, 32));
  return { hash: hash.toString('base64'), salt: salt.toString('base64') };
}

/** An AnswerKeeper that hashes at once, each hash when `run` gives it its turn. */
export function hashingAnswers(run: SlowWork): AnswerKeeper {
  return async (answer) => {
    const { hash, salt } = await hashAnswer(answer, run);
    return { answer_hash: hash, answer_salt: salt };
  };
}

export async function answerMatches(
  answer: string,
  stored: { hash: string; salt: string },
  run: SlowWork,
): Promise<boolean> {
  const candidate = await run(() =>
    scryptAsync(normaliseAnswer(answer), Buffer.from(stored.salt, 'base64'), 32),
  );
  const expected = Buffer.from(stored.hash, 'base64');
  return expected.length === candidate.length && timingSafeEqual(candidate, expected);
}

/**
 * Steps' settings with each answer a draft sealed (`answer_sealed`, see KeptAnswer) hashed now,
 * each hash in its turn of `run`; the same object when none was sealed. `unseal` opens a sealed
 * answer, and what it throws is thrown.
 */
export async function withSealedAnswersHashed<
  Settings extends Partial<Record<string, Record<string, unknown>>>,
>(settings: Settings, unseal: (sealed: string) => string, run: SlowWork): Promise<Settings> {
  let hashed: Settings | null = null;
  for (const [step, kept] of Object.entries(settings)) {
    if (typeof kept?.answer_sealed !== 'string') continue;
    const { answer_sealed: sealed, ...rest } = kept;
    const answer = await hashingAnswers(run)(unseal(sealed));
    hashed = { ...(hashed ?? settings), [step]: { ...rest, ...answer } };
  }
  return hashed ?? settings;
}

import { randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * Cryptographically random bytes (node's CSPRNG), taken from a 4 KB buffer that is filled again
 * when spent. A call into the CSPRNG costs about as much for 16 bytes as for 4 KB, and a case's
 * creation needs a dozen small draws (its ids, its public id, its link tokens, the request's
 * id): drawn one by one they were 3 % of the app's CPU per creation. Every byte is handed out
 * once, as a copy. (node's own randomUUID keeps such a cache too.)
 */
export function secureRandomBytes(length: number): Buffer {
  if (length > POOL_BYTES) return randomBytes(length);
  if (used + length > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const bytes = Buffer.from(pool.subarray(used, used + length));
  used += length;
  return bytes;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 string. Rejection sampling keeps every character equally likely
 * (a plain `byte % 62` would favour the first characters).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of secureRandomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** 16 base62 characters ≈ 95 random bits: short enough for a link, far beyond guessing. */
export function newPublicId(): string {
  return randomBase62(16);
}

const PUBLIC_ID = /^[0-9A-Za-z]{16}$/;

/** The shape of every public id newPublicId issues: anything else need not be looked up. */
export function looksLikePublicId(value: string): boolean {
  return PUBLIC_ID.test(value);
}

export const EVENT_ID_PREFIX = 'evt_';

export function eventWireId(uuid: string): string {
  return `${EVENT_ID_PREFIX}${uuid}`;
}

export { randomUUID };

/** The last id's time and counter (RFC 9562, 6.2, method 1): see newRowId. */
const lastRowId = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * The id of a row the service writes by the million (cases, events, mails): a UUIDv7, whose
 * leading 48 bits are the creation time in milliseconds, then a 32-bit counter and 42 random
 * bits. Rows made together sit together in every index on their id, as they do in the table: the
 * primary keys, and indexes led by these ids (a case's steps, an event's deliveries), grow at their
 * right edge instead of taking inserts all over, and the recent rows that are read most stay in few
 * pages. Measured over a million cases laid out as created (bench/profile.ts list, PROFILE_SQL=1), a
 * page of a team's newest open cases cost PostgreSQL 0.55 ms with random ids and 0.46 ms with
 * these (0.40 ms over ten thousand): with random ids, each case on the page reads a page of the
 * steps index of its own.
 *
 * Each id is greater than the one the process made before it, even within one millisecond (the
 * counter starts at a random value each millisecond and counts up within it, as the uuid package
 * does when it draws its own randomness; given ours, it would not). The rows a batch or an import
 * writes share one `created_at`, so lists ordered by (created_at, id) show them in the order they
 * were given, not in the order of random bits.
 */
export function newRowId(): string {
  const random = secureRandomBytes(16);
  const now = Date.now();
  if (now > lastRowId.msecs) {
    lastRowId.msecs = now;
    // 31 random bits: the counter's upper half is left for the ids after it in this millisecond.
    lastRowId.seq =
      (((random[6] ?? 0) & 0x7f) << 24) |
      ((random[7] ?? 0) << 16) |
      ((random[8] ?? 0) << 8) |
      (random[9] ?? 0);
  } else {
    // A clock that went back keeps the last time: the ids still only grow.
    lastRowId.seq = (lastRowId.seq + 1) | 0;
    if (lastRowId.seq === 0) lastRowId.msecs += 1;
  }
  return uuidv7({ random, msecs: lastRowId.msecs, seq: lastRowId.seq });
}

/** zod's UUID check, built once: a schema made per call cost a read of one case 1 % of its CPU. */
const UUID = z.uuid();

/** Whether `value` is a UUID: an id that is not names nothing (callers answer 404, as for an unknown one). */
export function isUuid(value: string): boolean {
  return UUID.safeParse(value).success;
}

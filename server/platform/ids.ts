import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 string. Rejection sampling keeps every character equally likely
 * (a plain `byte % 62` would favour the first characters).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
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

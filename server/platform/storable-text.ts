/**
 * Text from outside (a webhook receiver's answer, a vendor's field, anything that reaches the
 * outbox) made storable before it reaches PostgreSQL, which refuses NUL in `text` (22021) and
 * `\u0000` or a lone surrogate in `json`/`jsonb` (22P05, 22P02): one such value fails the whole
 * statement, every other row in it included.
 *
 * The API refuses control characters at its edge (server/api/trpc/init.ts, with the class below);
 * what reaches the database another way is repaired here instead, because refusing would lose the
 * rest of the text and the change it belongs to.
 */

/**
 * C0 control characters other than tab, line feed and carriage return, and DEL: PostgreSQL cannot
 * store NUL at all, and none of them belongs in an e-mail, a name, a note or a log.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'g');

/** U+FFFD, what a decoder puts where a byte sequence is not UTF-8. */
const REPLACEMENT = '\uFFFD';

/**
 * The text with each control character (above) and each lone surrogate (which UTF-8 cannot encode)
 * replaced by U+FFFD, so a reader sees that something was there; at most `maxBytes` of UTF-8 when
 * given, cut before a character rather than through it.
 */
export function storableText(text: string, maxBytes?: number): string {
  const safe = text.toWellFormed().replace(CONTROL_CHARACTERS, REPLACEMENT);
  return maxBytes === undefined ? safe : truncateUtf8(safe, maxBytes);
}

/**
 * Bytes as storable text: decoded as UTF-8 (a sequence that is not UTF-8 becomes U+FFFD), then as
 * `storableText`. The bytes are decoded whole before the cut, so a character at the limit is kept
 * whole or left out, never turned into U+FFFD.
 */
export function storableBytes(bytes: Uint8Array, maxBytes: number): string {
  // ignoreBOM keeps a leading byte-order mark, so the text is what was sent.
  return storableText(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), maxBytes);
}

/**
 * A JSON value with every string in it (keys included) made storable, as `storableText`. Arrays and
 * plain objects are copied; anything else (numbers, a Date that JSON.stringify will write) is kept.
 */
export function storableJson<T>(value: T): T {
  return repair(value) as T;
}

function repair(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(repair);
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), repair(item)]));
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The longest prefix of `text` whose UTF-8 takes at most `maxBytes`. `encodeInto` writes whole
 * characters only, so what it read is a prefix that ends between two characters.
 */
function truncateUtf8(text: string, maxBytes: number): string {
  // Each UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair, two units, takes 4).
  if (text.length * 3 <= maxBytes) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

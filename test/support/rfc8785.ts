/**
 * RFC 8785 (JSON Canonicalization Scheme), written here from the RFC for the tests alone, so that
 * what the product hashes and signs is checked against the documented form and not against the
 * product's own canonicalizer: object members sorted by their names' UTF-16 code units, no
 * whitespace, strings as ECMAScript's JSON.stringify writes them, numbers as ECMAScript writes
 * them (RFC 8785 §3.2.2.3 adopts exactly that), and the literals.
 */
export function rfc8785(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('RFC 8785 has no form for NaN or Infinity');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(rfc8785).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    // Sorted by UTF-16 code units (§3.2.3): JavaScript's default string order is exactly that.
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${rfc8785(item)}`).join(',')}}`;
  }
  throw new Error(`RFC 8785 has no form for ${typeof value}`);
}

/** RFC 8785's own examples (§3.2.2 and §3.2.3), input and canonical output. */
export const RFC8785_VECTORS: Array<{ input: unknown; output: string }> = [
  {
    input: {
      // As the RFC writes them (the first has more digits than a double holds: parsed, as JSON would).
      numbers: [Number('333333333.33333329'), 1e30, 4.5, 2e-3, 0.000000000000000000000000001],
      string: '\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/',
      literals: [null, true, false],
    },
    output:
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
  },
  {
    input: {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    },
    output:
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  },
];

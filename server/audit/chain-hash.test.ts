import { createHash, createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { RFC8785_VECTORS, rfc8785 } from '@/test/support/rfc8785';
import { chainHash, keyedHash } from './chain-hash';

/**
 * The audit chain's hash is documented as SHA-256 (hex) of the RFC 8785 canonical JSON of
 * `{seq, prev, entry}`. Checked here against the RFC's own vectors, against the test's own
 * canonicalizer, and against answers computed once outside JavaScript (Python's json with sorted
 * keys and no spaces, which is RFC 8785 for these values), so a change to the formula fails.
 */
const ENTRY = {
  action: 'case.created',
  actor: 'hmac:abc',
  details: { n: 1, name: 'Zoë', list: [true, null, 2.5] },
  team: 't1',
  target: 'case-1',
};

describe('the audit chain’s hashes', () => {
  it('canonical JSON is RFC 8785: the RFC’s examples, by the library the product uses and by the test’s own', () => {
    for (const vector of RFC8785_VECTORS) {
      expect(canonicalize(vector.input)).toBe(vector.output);
      expect(rfc8785(vector.input)).toBe(vector.output);
    }
  });

  it('chainHash is SHA-256 of the canonical {seq, prev, entry}: known answers', () => {
    expect(chainHash(1, null, ENTRY)).toBe(
      '643e00c4ad5a013833a26a694e5b82bc7a48ab1b92dd0413ace1752559561103',
    );
    expect(chainHash(7, 'ab'.repeat(32), ENTRY)).toBe(
      '9818c205442a97c0f9579621aea8341554fe3bae11c301eb90d702235c235891',
    );
    // Each part counts: the place, the predecessor, the entry.
    expect(chainHash(8, 'ab'.repeat(32), ENTRY)).not.toBe(chainHash(7, 'ab'.repeat(32), ENTRY));
    expect(chainHash(7, 'cd'.repeat(32), ENTRY)).not.toBe(chainHash(7, 'ab'.repeat(32), ENTRY));
    expect(chainHash(7, 'ab'.repeat(32), { ...ENTRY, target: 'case-2' })).not.toBe(
      chainHash(7, 'ab'.repeat(32), ENTRY),
    );
    const independent = createHash('sha256')
      .update(rfc8785({ seq: 7, prev: 'ab'.repeat(32), entry: ENTRY }))
      .digest('hex');
    expect(chainHash(7, 'ab'.repeat(32), ENTRY)).toBe(independent);
  });

  it('keyedHash is hmac: and the base64url HMAC-SHA-256 under the key', () => {
    const key = new Uint8Array(32).fill(7);
    expect(keyedHash(key, 'ada@acme.test')).toBe(
      `hmac:${createHmac('sha256', key).update('ada@acme.test').digest('base64url')}`,
    );
  });
});

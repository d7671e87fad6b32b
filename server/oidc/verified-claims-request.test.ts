import { describe, expect, it } from 'vitest';
import { isOAuthError } from './oauth-error';
import { readVerifiedClaimsRequest, requestedClaim, requestedValue } from './verified-claims-request';

/** The OAuth refusal `read` throws, as [error, description]. */
function refusal(claims: unknown): [string, string] | null {
  try {
    readVerifiedClaimsRequest(claims);
    return null;
  } catch (error) {
    if (!isOAuthError(error)) throw error;
    return [error.error, error.description];
  }
}

const entry = (claims: unknown, verification: unknown = { trust_framework: { value: 'IDV-DELEGATED' } }) => ({
  id_token: { verified_claims: [{ verification, claims }] },
});

describe('the verified_claims request', () => {
  it('reads each shape of a claim Okta has sent: {value, fuzzy}, a bare string, {fuzzy: value}', () => {
    const [read] = readVerifiedClaimsRequest(
      JSON.stringify(
        entry(
          {
            given_name: { value: 'Ada', fuzzy: true },
            family_name: 'Lovelace',
            middle_name: { fuzzy: 'King' },
            nickname: { value: 'Countess' },
            title: { value: 7 },
            email: null,
            birthdate: { fuzzy: 1 },
          },
          { trust_framework: 'IDV_DELEGATED', assurance_level: { value: 'VERIFIED' } },
        ),
      ),
    );
    expect(read).toEqual({
      trustFramework: 'IDV_DELEGATED',
      assuranceLevel: 'VERIFIED',
      claims: {
        given_name: { value: 'Ada', fuzzy: true },
        family_name: { value: 'Lovelace', fuzzy: false },
        middle_name: { value: 'King', fuzzy: true },
        nickname: { value: 'Countess', fuzzy: false },
        title: { value: null, fuzzy: false },
        email: { value: null, fuzzy: false },
        birthdate: { value: null, fuzzy: false },
      },
    });
  });

  it('answers nothing asked as an empty list, and one object as a list of one', () => {
    for (const nothing of [undefined, null, '', {}, { userinfo: {} }, { id_token: {} }]) {
      expect(readVerifiedClaimsRequest(nothing)).toEqual([]);
    }
    const single = readVerifiedClaimsRequest({
      id_token: { verified_claims: { verification: { trust_framework: 'IDV-DELEGATED' } } },
    });
    expect(single).toEqual([{ trustFramework: 'IDV-DELEGATED', assuranceLevel: null, claims: {} }]);
  });

  it('refuses each malformed request naming where', () => {
    expect(refusal('{')).toEqual(['invalid_request', 'claims is not JSON']);
    expect(refusal('[]')).toEqual(['invalid_request', 'claims must be a JSON object']);
    expect(refusal(0)).toEqual(['invalid_request', 'claims must be a JSON object']);
    expect(refusal('"text"')).toEqual(['invalid_request', 'claims must be a JSON object']);
    expect(refusal({ id_token: [] })).toEqual(['invalid_request', 'claims.id_token must be an object']);
    expect(refusal({ id_token: { verified_claims: [{}] } })).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[0] must be an object with a verification object',
    ]);
    expect(refusal({ id_token: { verified_claims: [{ verification: 'x' }] } })).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[0] must be an object with a verification object',
    ]);
    expect(refusal({ id_token: { verified_claims: ['x'] } })?.[1]).toBe(
      'claims.id_token.verified_claims[0] must be an object with a verification object',
    );
    expect(refusal(entry({}, { trust_framework: 'eidas' }))).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[0].verification.trust_framework must be IDV-DELEGATED or IDV_DELEGATED, not eidas',
    ]);
    expect(refusal(entry({}, {}))).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[0].verification.trust_framework must be IDV-DELEGATED or IDV_DELEGATED',
    ]);
    expect(
      refusal({
        id_token: {
          verified_claims: [
            { verification: { trust_framework: 'IDV-DELEGATED' } },
            { verification: { trust_framework: 'IDV-DELEGATED' }, claims: ['given_name'] },
          ],
        },
      }),
    ).toEqual(['invalid_request', 'claims.id_token.verified_claims[1].claims must be an object']);
    expect(refusal(entry('given_name'))).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[0].claims must be an object',
    ]);
  });

  it('holds a JSON string to one line: a control character or a line separator inside is refused', () => {
    const withBreak = JSON.stringify(entry({ given_name: { value: 'Ada\nLovelace' } }));
    expect(refusal(withBreak)?.[0]).toBe('invalid_request');
    expect(refusal(withBreak)?.[1]).toMatch(/^claims: /);
    expect(refusal(entry({ given_name: { value: 'Ada\u2028' } }))?.[1]).toMatch(/^claims: /);
    expect(refusal(entry({ given_name: { value: 'Ada\u202e' } }))?.[1]).toMatch(/^claims: /);
  });

  it('finds a claim in the first entry that holds a value', () => {
    const entries = readVerifiedClaimsRequest({
      id_token: {
        verified_claims: [
          { verification: { trust_framework: 'IDV-DELEGATED' }, claims: { given_name: { value: '' } } },
          { verification: { trust_framework: 'IDV-DELEGATED' }, claims: { given_name: { fuzzy: 'Ada' } } },
          { verification: { trust_framework: 'IDV-DELEGATED' }, claims: { given_name: { value: 'Eve' } } },
        ],
      },
    });
    expect(requestedClaim(entries, 'given_name')).toEqual({ value: 'Ada', fuzzy: true });
    expect(requestedValue(entries, 'given_name')).toBe('Ada');
    expect(requestedClaim(entries, 'family_name')).toBeNull();
    expect(requestedValue(entries, 'family_name')).toBeNull();
    expect(requestedValue([], 'given_name')).toBeNull();
  });
});

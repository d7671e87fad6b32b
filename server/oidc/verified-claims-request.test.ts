import { describe, expect, it } from 'vitest';
import { isOAuthError } from './oauth-error';
import {
  type ClaimsRequest,
  readClaimsRequest,
  requestedClaim,
  requestedEmail,
  requestedValue,
} from './verified-claims-request';

/** The verified_claims entries a `claims` parameter asks for. */
const readVerifiedClaimsRequest = (claims: unknown) => readClaimsRequest(claims).verifiedClaims;

/** The OAuth refusal `run` throws, as [error, description]. */
function thrown(run: () => unknown): [string, string] | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!isOAuthError(error)) throw error;
    return [error.error, error.description];
  }
}

/** The OAuth refusal reading `claims` throws, as [error, description]. */
const refusal = (claims: unknown) => thrown(() => readClaimsRequest(claims));

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
    expect(refusal({ id_token: null })).toEqual(['invalid_request', 'claims.id_token must be an object']);
    expect(refusal({ userinfo: 'email' })).toEqual(['invalid_request', 'claims.userinfo must be an object']);
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

describe('the person’s e-mail address in a request', () => {
  const names = {
    given_name: { value: 'Ada', fuzzy: true },
    family_name: { value: 'Lovelace', fuzzy: true },
  };
  const verified = (claims: Record<string, unknown>) => ({
    verification: { trust_framework: 'IDV-DELEGATED' },
    claims: { ...names, ...claims },
  });
  const person = { loginHint: '00uADA', topLevelEmail: false };
  const emailOf = (claims: unknown, who = person) => requestedEmail(readClaimsRequest(claims), who);
  const emailRefusal = (claims: unknown, who = person) => thrown(() => emailOf(claims, who));

  it('reads it from each place OpenID Connect puts a claim asked for with a value, and from verified_claims', () => {
    // Core §5.5.1's individual claims, in the ID token or the UserInfo answer, and Okta's place.
    expect(emailOf({ id_token: { email: { value: 'ada@acme.test' } } })).toBe('ada@acme.test');
    expect(emailOf({ userinfo: { email: { value: 'ada@acme.test', essential: true } } })).toBe(
      'ada@acme.test',
    );
    expect(emailOf({ id_token: { verified_claims: verified({ email: { value: 'ada@acme.test' } }) } })).toBe(
      'ada@acme.test',
    );
    expect(
      readClaimsRequest({
        id_token: {
          email: { value: 'ada@acme.test' },
          verified_claims: [verified({}), verified({ email: 'ada@acme.test' })],
        },
        userinfo: { email: { value: 'ada@acme.test' } },
      }).emails.map((place) => place.at),
    ).toEqual([
      'claims.id_token.email',
      'claims.userinfo.email',
      'claims.id_token.verified_claims[1].claims.email',
    ]);
  });

  it('takes the login_hint when no place holds a value, and only when it is an address', () => {
    // A claim asked for without a value (null, essential) names nobody.
    for (const claims of [
      undefined,
      { id_token: { email: null }, userinfo: { email: { essential: true } } },
      { id_token: { verified_claims: verified({ email: null }) } },
    ]) {
      expect(emailOf(claims, { ...person, loginHint: 'ada@acme.test' })).toBe('ada@acme.test');
      expect(emailRefusal(claims)).toEqual([
        'invalid_request',
        'No e-mail address for the person: send it as claims.id_token.email or claims.userinfo.email ({"value": "…"}, OpenID Connect Core §5.5.1) or in a verified_claims entry\'s claims, or an e-mail address as login_hint.',
      ]);
    }
    // The claim, when one is given, wins over a login_hint that is an address too.
    expect(
      emailOf(
        { id_token: { email: { value: 'ada@acme.test' } } },
        { ...person, loginHint: 'a.lovelace@acme.test' },
      ),
    ).toBe('ada@acme.test');
    // A top-level email parameter is none of OAuth's: ignored, and the refusal says so.
    expect(emailRefusal(undefined, { ...person, topLevelEmail: true })?.[1]).toMatch(
      / A top-level email parameter is not read: OAuth ignores the parameters it does not define \(RFC 6749 §3\.1\)\.$/,
    );
  });

  it('refuses two places that name different people, naming both; the same address in any case is one', () => {
    const request: ClaimsRequest = readClaimsRequest({
      id_token: {
        email: { value: 'ada@acme.test' },
        verified_claims: verified({ email: { value: 'eve@acme.test' } }),
      },
    });
    expect(thrown(() => requestedEmail(request, person))).toEqual([
      'invalid_request',
      "claims.id_token.email and claims.id_token.verified_claims[0].claims.email give different e-mail addresses: send the person's one address.",
    ]);
    expect(
      emailRefusal({
        id_token: { email: { value: 'ada@acme.test' } },
        userinfo: { email: { value: 'eve@acme.test' } },
      }),
    ).toEqual([
      'invalid_request',
      "claims.id_token.email and claims.userinfo.email give different e-mail addresses: send the person's one address.",
    ]);
    // Positive control: the same address, differently cased, in all three places.
    expect(
      emailOf({
        id_token: {
          email: { value: 'Ada@Acme.test' },
          verified_claims: verified({ email: { value: 'ada@acme.test' } }),
        },
        userinfo: { email: { value: 'ADA@ACME.TEST' } },
      }),
    ).toBe('Ada@Acme.test');
  });

  it('refuses a value that is no address, naming where', () => {
    expect(emailRefusal({ userinfo: { email: { value: 'ada' } } })).toEqual([
      'invalid_request',
      'claims.userinfo.email is not an e-mail address',
    ]);
    expect(
      emailRefusal(
        { id_token: { verified_claims: [verified({}), verified({ email: { value: 'not an address' } })] } },
        { ...person, loginHint: 'ada@acme.test' },
      ),
    ).toEqual([
      'invalid_request',
      'claims.id_token.verified_claims[1].claims.email is not an e-mail address',
    ]);
  });
});

import { generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifiedClaimsProblems } from '@/test/support/verified-claims-schema';
import { signIdToken, TOKEN_SECONDS, verifiedClaims } from './id-token';

const verifiedAt = new Date('2026-11-26T10:00:00.000Z');

describe('an ID token’s verified_claims', () => {
  it('echoes each entry’s framework and level, the check’s time, and the names compared, as plain values', () => {
    const issued = verifiedClaims(
      [
        {
          trustFramework: 'IDV_DELEGATED',
          assuranceLevel: 'VERIFIED',
          claims: {
            given_name: { value: 'Ada', fuzzy: true },
            family_name: { value: 'Lovelace', fuzzy: false },
            email: { value: 'ada@x.test', fuzzy: true },
          },
        },
      ],
      { verifiedAt, compared: { given_name: 'Ada', family_name: 'Lovelace' } },
    );
    expect(issued).toEqual([
      {
        verification: {
          trust_framework: 'IDV_DELEGATED',
          assurance_level: 'VERIFIED',
          time: '2026-11-26T10:00:00.000Z',
        },
        // A fuzzy request asserts the plain value all the same: `fuzzy` says how to match, not what matched.
        claims: { given_name: 'Ada', family_name: 'Lovelace' },
      },
    ]);
    expect(verifiedClaimsProblems({ verified_claims: issued })).toEqual([]);
  });

  it('holds to the working group’s schema, which refuses the request’s {value, fuzzy} objects as claims', () => {
    const entry = (claims: Record<string, unknown>) => ({
      verified_claims: [
        { verification: { trust_framework: 'IDV-DELEGATED', time: verifiedAt.toISOString() }, claims },
      ],
    });
    // The specification's own example, and the shape this provider issued before: a control each way.
    expect(verifiedClaimsProblems(entry({ given_name: 'Max', family_name: 'Meier' }))).toEqual([]);
    expect(verifiedClaimsProblems(entry({ given_name: { value: 'Ada', fuzzy: true } }))).toContain(
      '/verified_claims/0/claims/given_name must be string',
    );
  });

  it('asserts no name it did not compare: another entry’s other value is left out', () => {
    const [first, second] = verifiedClaims(
      [
        {
          trustFramework: 'IDV-DELEGATED',
          assuranceLevel: null,
          claims: {
            given_name: { value: 'Alice', fuzzy: true },
            family_name: { value: 'Smith', fuzzy: true },
          },
        },
        {
          trustFramework: 'IDV-DELEGATED',
          assuranceLevel: null,
          claims: { given_name: { value: 'Bob', fuzzy: true }, family_name: { value: 'Smith', fuzzy: true } },
        },
      ],
      { verifiedAt, compared: { given_name: 'Alice', family_name: 'Smith' } },
    );
    expect(first?.claims).toEqual({ given_name: 'Alice', family_name: 'Smith' });
    expect(second?.claims).toEqual({ family_name: 'Smith' });
    expect(verifiedClaimsProblems({ verified_claims: [first, second] })).toEqual([]);
    expect(first?.verification).toEqual({
      trust_framework: 'IDV-DELEGATED',
      time: '2026-11-26T10:00:00.000Z',
    });
  });
});

describe('an ID token', () => {
  const now = new Date('2026-11-28T12:00:00.000Z');
  const claims = {
    issuer: 'https://vouch.example',
    audience: 'client_abc',
    subject: 'case_sub_1',
    now,
    verifiedClaims: [{ verification: { trust_framework: 'IDV_DELEGATED' }, claims: {} }],
    livemode: true,
  };

  async function signed(nonce: string | null) {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const token = await signIdToken({ kid: 'key-1', alg: 'RS256', privateKey }, { ...claims, nonce });
    return {
      token,
      verified: await jwtVerify(token, publicKey, { algorithms: ['RS256'], currentDate: now }),
    };
  }

  it('is a JWT signed RS256 under the key’s kid, valid for TOKEN_SECONDS from now', async () => {
    const { verified } = await signed('n-0S6_WzA2Mj');
    expect(verified.protectedHeader).toEqual({ alg: 'RS256', kid: 'key-1', typ: 'JWT' });
    const iat = now.getTime() / 1000;
    expect(verified.payload).toEqual({
      iss: 'https://vouch.example',
      aud: 'client_abc',
      sub: 'case_sub_1',
      iat,
      exp: iat + TOKEN_SECONDS,
      nonce: 'n-0S6_WzA2Mj',
      verified_claims: claims.verifiedClaims,
      vouch_livemode: true,
    });
  });

  it('carries no nonce when the request sent none (not an empty or null one)', async () => {
    const { verified } = await signed(null);
    expect('nonce' in verified.payload).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { verifiedClaims } from './id-token';

const verifiedAt = new Date('2026-11-26T10:00:00.000Z');

describe('an ID token’s verified_claims', () => {
  it('echoes each entry’s framework and level, the check’s time, and the names as sent', () => {
    expect(
      verifiedClaims(
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
      ),
    ).toEqual([
      {
        verification: {
          trust_framework: 'IDV_DELEGATED',
          assurance_level: 'VERIFIED',
          time: '2026-11-26T10:00:00.000Z',
        },
        claims: { given_name: { value: 'Ada', fuzzy: true }, family_name: 'Lovelace' },
      },
    ]);
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
    expect(first?.claims).toEqual({
      given_name: { value: 'Alice', fuzzy: true },
      family_name: { value: 'Smith', fuzzy: true },
    });
    expect(second?.claims).toEqual({ family_name: { value: 'Smith', fuzzy: true } });
    expect(first?.verification).toEqual({
      trust_framework: 'IDV-DELEGATED',
      time: '2026-11-26T10:00:00.000Z',
    });
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type OidcClientRow, secretMatches } from './oidc-clients';

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');
const now = new Date('2026-11-26T10:00:00Z');

function client(overrides: Partial<OidcClientRow> = {}): OidcClientRow {
  return {
    id: 'vouch_client_x',
    teamId: 't',
    livemode: false,
    name: 'Okta',
    redirectUris: ['https://rp.example/cb'],
    defaultTemplateId: null,
    secretHash: hash('new-secret'),
    secretHint: 'cret',
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

describe('a client secret', () => {
  it('matches the current secret only', () => {
    expect(secretMatches(client(), 'new-secret', now)).toBe(true);
    expect(secretMatches(client(), 'new-secreT', now)).toBe(false);
    expect(secretMatches(client(), '', now)).toBe(false);
  });

  it('keeps the replaced secret working until its grace period ends, not a moment later', () => {
    const rotated = client({
      previousSecretHash: hash('old-secret'),
      previousSecretExpiresAt: new Date(now.getTime() + 3_600_000),
    });
    expect(secretMatches(rotated, 'old-secret', now)).toBe(true);
    expect(secretMatches(rotated, 'new-secret', now)).toBe(true);
    expect(secretMatches(rotated, 'old-secret', new Date(now.getTime() + 3_600_000))).toBe(false);
    expect(secretMatches(client({ previousSecretHash: hash('old-secret') }), 'old-secret', now)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import type { OidcClient } from '@/server/oidc/oidc-clients';
import { clientIdInput, createClientInput, rotateClientSecretInput, toClientWire } from './wire';

/** What the console and the CLI may send about identity-provider clients, held to its limits. */
describe('identity-provider client input', () => {
  const uris = (n: number, length = 30) =>
    Array.from({ length: n }, (_, i) => `https://rp.example/${String(i).padEnd(length - 19, 'x')}`);

  it('takes one to ten redirect URIs of up to 2,000 characters each', () => {
    const parse = (redirect_uris: string[]) =>
      createClientInput.safeParse({ name: 'Okta', redirect_uris }).success;
    expect(parse(uris(1))).toBe(true);
    expect(parse(uris(2))).toBe(true);
    expect(parse(uris(10))).toBe(true);
    expect(parse(uris(11))).toBe(false);
    expect(parse([])).toBe(false);
    expect(parse(uris(1, 2000))).toBe(true);
    expect(parse(uris(1, 2001))).toBe(false);
    expect(createClientInput.parse({ name: 'Okta', redirect_uris: uris(1) }).mode).toBe('test');
  });

  it('takes a client id of up to 64 characters, and a grace of 0 to 30 days', () => {
    expect(clientIdInput.safeParse({ client_id: 'vouch_client_x' }).success).toBe(true);
    expect(clientIdInput.safeParse({ client_id: 'x'.repeat(64) }).success).toBe(true);
    expect(clientIdInput.safeParse({ client_id: 'x'.repeat(65) }).success).toBe(false);
    const grace = (grace_seconds: number) =>
      rotateClientSecretInput.safeParse({ client_id: 'vouch_client_x', grace_seconds }).success;
    expect(grace(0)).toBe(true);
    expect(grace(3600)).toBe(true);
    expect(grace(30 * 86_400)).toBe(true);
    expect(grace(30 * 86_400 + 1)).toBe(false);
    expect(grace(-1)).toBe(false);
    expect(grace(1.5)).toBe(false);
  });

  it('answers a client without its secret: the hint, and when a replaced one stops working', () => {
    const at = new Date('2026-11-28T10:00:00Z');
    const client = {
      id: 'vouch_client_x',
      teamId: 't',
      name: 'Okta',
      redirectUris: ['https://rp.example/cb'],
      defaultTemplateId: null,
      defaultTemplate: 'helpdesk',
      livemode: true,
      secretHash: 'h',
      secretHint: 'abcd',
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      createdAt: at,
      updatedAt: at,
    } satisfies OidcClient;
    expect(toClientWire(client)).toEqual({
      client_id: 'vouch_client_x',
      name: 'Okta',
      redirect_uris: ['https://rp.example/cb'],
      default_template: 'helpdesk',
      mode: 'live',
      secret_hint: 'abcd',
      previous_secret_expires_at: null,
      created_at: '2026-11-28T10:00:00.000Z',
    });
    expect(
      toClientWire({ ...client, livemode: false, previousSecretExpiresAt: new Date('2026-11-29T10:00:00Z') }),
    ).toMatchObject({ mode: 'test', previous_secret_expires_at: '2026-11-29T10:00:00.000Z' });
  });
});

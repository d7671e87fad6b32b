/**
 * The public side of the signing keys (issue 29): /.well-known/jwks.json publishes every key that
 * may have signed something still kept, without authentication, and the operator rotates them with
 * the CLI; the OpenAPI document says where the keys are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

const SECRET = 'a-signing-key-secret-of-at-least-32-characters';
let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url, env: { KEYS_SECRET: SECRET } });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

type Jwks = { keys: Array<Record<string, string>> };

async function jwks(): Promise<{ response: Response; body: Jwks }> {
  const response = await fetch(`${app.baseUrl}/.well-known/jwks.json`);
  return { response, body: (await response.json()) as Jwks };
}

const rotate = (args: string[] = []) =>
  runCli(['keys', 'signing-rotate', ...args], { DATABASE_URL: database.url, KEYS_SECRET: SECRET });

describe('/.well-known/jwks.json and keys signing-rotate', () => {
  it('publishes the keys, without authentication, to anyone', async () => {
    const first = await rotate();
    expect(first).toMatchObject({ alg: 'EdDSA', retired: [] });
    const { response, body } = await jwks();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(body.keys).toEqual([
      { kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: first.kid, alg: 'EdDSA', use: 'sig' },
    ]);
  });

  it('a rotation adds the new key and keeps the retired one; RS256 keys are published beside them', async () => {
    const before = (await jwks()).body.keys.map((key) => key.kid);
    const next = await rotate(['--alg', 'EdDSA']);
    expect(next.retired).toEqual(before);
    const rsa = await rotate(['--alg', 'RS256']);
    const { body } = await jwks();
    expect(body.keys.map((key) => key.kid)).toEqual(expect.arrayContaining([...before, next.kid, rsa.kid]));
    const published = body.keys.find((key) => key.kid === rsa.kid);
    expect(published).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(published).not.toHaveProperty('d');
    for (const key of body.keys) expect(Object.keys(key)).not.toEqual(expect.arrayContaining(['d']));
  });

  it('refuses an algorithm it does not sign with, and a secret other than the keys’', async () => {
    await expect(rotate(['--alg', 'HS256'])).rejects.toThrow(/--alg must be EdDSA or RS256/);
    await expect(
      runCli(['keys', 'signing-rotate'], {
        DATABASE_URL: database.url,
        KEYS_SECRET: 'a-mistyped-secret-of-at-least-32-characters',
      }),
    ).rejects.toThrow(/KEYS_SECRET is not the secret it was stored under/);
    await expect(
      runCli(['keys', 'signing-rotate'], { DATABASE_URL: database.url, VOUCH_ENV: 'production' }),
    ).rejects.toThrow(/KEYS_SECRET is unset/);
  });

  it('the OpenAPI document says where the keys are', async () => {
    const document = (await (await fetch(`${app.baseUrl}/v1/openapi.json`)).json()) as {
      info: { description: string };
      'x-jwks-uri': string;
    };
    expect(document['x-jwks-uri']).toBe(`${app.baseUrl}/.well-known/jwks.json`);
    expect(document.info.description).toContain(`${app.baseUrl}/.well-known/jwks.json`);
  });
});

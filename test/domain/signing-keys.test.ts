/**
 * The service's signing keys (issue 29, decisions: "Evidence records and signing keys") against a
 * real PostgreSQL: made on first use, one current per algorithm even when several processes ask at
 * once, private halves kept only encrypted under the configured secret, rotation keeps the retired
 * key published for AUDIT_RETENTION_DAYS, and what a key signed verifies with the published set.
 */
import { compactVerify, createLocalJWKSet, FlattenedSign, flattenedVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeys } from '@/db/schema';
import {
  currentSigningKey,
  keyEncryptionKey,
  publishedKeys,
  rotateSigningKey,
} from '@/server/signing/signing-keys';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
const kek = keyEncryptionKey('a-signing-key-secret-of-at-least-32-characters');
const day = 86_400_000;
const start = new Date('2026-01-01T00:00:00Z');

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

async function sign(key: Awaited<ReturnType<typeof currentSigningKey>>, payload: string) {
  return new FlattenedSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(key.privateKey);
}

describe('signing keys', () => {
  it('are made on first use, once, however many processes ask at the same moment', async () => {
    const keys = await Promise.all(
      Array.from({ length: 6 }, () => currentSigningKey(database.db, 'EdDSA', kek, start)),
    );
    expect(new Set(keys.map((key) => key.kid)).size).toBe(1);
    const rows = await database.db.select().from(signingKeys);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.publicJwk).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      alg: 'EdDSA',
      use: 'sig',
      kid: keys[0]?.kid,
    });
    expect(rows[0]?.publicJwk).not.toHaveProperty('d');
  });

  it('keep the private half only encrypted, readable only with the secret it was stored under', async () => {
    const [row] = await database.db.select().from(signingKeys);
    const jwe = row?.privateJwe ?? '';
    expect(jwe.split('.')).toHaveLength(5);
    expect(JSON.parse(Buffer.from(jwe.split('.')[0] ?? '', 'base64url').toString())).toMatchObject({
      alg: 'dir',
      enc: 'A256GCM',
    });
    expect(jwe).not.toContain('"d"');
    await expect(
      currentSigningKey(
        database.db,
        'EdDSA',
        keyEncryptionKey('another-secret-of-at-least-32-characters!'),
        start,
      ),
    ).rejects.toThrow(/cannot be decrypted: SIGNING_KEY_SECRET is not the secret it was stored under/);
  });

  it('sign what the published key set verifies; RS256 keys live beside them', async () => {
    const ed = await currentSigningKey(database.db, 'EdDSA', kek, start);
    const rs = await currentSigningKey(database.db, 'RS256', kek, start);
    const jwks = createLocalJWKSet({ keys: await publishedKeys(database.db, start, 365) });
    const signed = await sign(ed, 'evidence');
    expect(new TextDecoder().decode((await flattenedVerify(signed, jwks)).payload)).toBe('evidence');
    const token = `${signed.protected}.${signed.payload}.${signed.signature}`;
    expect((await compactVerify(token, jwks)).protectedHeader.kid).toBe(ed.kid);
    const byRsa = await sign(rs, 'id token');
    expect((await flattenedVerify(byRsa, jwks)).protectedHeader).toMatchObject({ alg: 'RS256', kid: rs.kid });
  });

  it('refuse to rotate under another secret than the current key’s, which stays current', async () => {
    const before = await currentSigningKey(database.db, 'EdDSA', kek, start);
    const other = keyEncryptionKey('another-secret-of-at-least-32-characters!');
    await expect(rotateSigningKey(database.db, 'EdDSA', other, start)).rejects.toThrow(/cannot be decrypted/);
    expect((await currentSigningKey(database.db, 'EdDSA', kek, start)).kid).toBe(before.kid);
  });

  it('rotate: the new key signs, the old one stays published for the retention period, then is withdrawn', async () => {
    const before = await currentSigningKey(database.db, 'EdDSA', kek, start);
    const oldRecord = await sign(before, 'signed before the rotation');
    const rotated = await rotateSigningKey(database.db, 'EdDSA', kek, new Date(start.getTime() + day));
    expect(rotated.retired).toEqual([before.kid]);
    const after = await currentSigningKey(database.db, 'EdDSA', kek, new Date(start.getTime() + day));
    expect(after.kid).toBe(rotated.kid);
    expect(after.kid).not.toBe(before.kid);

    const within = await publishedKeys(database.db, new Date(start.getTime() + 30 * day), 365);
    expect(within.map((key) => key.kid)).toEqual(expect.arrayContaining([before.kid, after.kid]));
    await expect(flattenedVerify(oldRecord, createLocalJWKSet({ keys: within }))).resolves.toBeDefined();

    const past = await publishedKeys(database.db, new Date(start.getTime() + 367 * day), 365);
    expect(past.map((key) => key.kid)).not.toContain(before.kid);
    expect(past.map((key) => key.kid)).toContain(after.kid);
    await expect(flattenedVerify(oldRecord, createLocalJWKSet({ keys: past }))).rejects.toThrow();
  });
});

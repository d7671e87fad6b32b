/**
 * The service's signing keys (issue 29, decisions: "Evidence records and signing keys") against a
 * real PostgreSQL: made on first use, one current per algorithm even when several processes ask at
 * once, private halves kept only encrypted under the configured secret, rotation keeps the retired
 * key published for AUDIT_RETENTION_DAYS, and what a key signed verifies with the published set.
 */

import { hkdfSync } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { compactVerify, createLocalJWKSet, FlattenedSign, flattenedVerify } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { appSecrets, auditLog, signingKeys } from '@/db/schema';
import { revokeKey } from '@/server/application/signing/revoke-signing-key';
import { sealAuditChains, verifyAuditChain } from '@/server/audit/audit-chain';
import { purgeAudit } from '@/server/audit/purge-audit';
import { recordAudit, SYSTEM_ACTOR } from '@/server/audit/record-audit';
import { TOKEN_SECONDS } from '@/server/oidc/id-token';
import { signClaims, signedBy, signFlattened, verifiedClaims } from '@/server/signing/sign';
import {
  currentSigningKey,
  keyEncryptionKey,
  publishedKeys,
  RETIRED_ID_TOKEN_KEY_SECONDS,
  revokedKeys,
  rotateSigningKey,
  signingSecretMismatch,
} from '@/server/signing/signing-keys';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';
import { createTeam } from '@/server/teams/manage-teams';
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
    ).rejects.toThrow(/cannot be decrypted: KEYS_SECRET is not the secret it was stored under/);
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

  it('at start-up name the first current key another secret cannot unlock, and ask for no secret while there is no key', async () => {
    const empty = await createTestDatabase();
    try {
      let asked = 0;
      const secret = async () => {
        asked += 1;
        return kek;
      };
      expect(await signingSecretMismatch(empty.db, secret)).toBeUndefined();
      expect(asked).toBe(0);
    } finally {
      await empty.close();
    }
    const current = [
      (await currentSigningKey(database.db, 'EdDSA', kek, start)).kid,
      (await currentSigningKey(database.db, 'RS256', kek, start)).kid,
    ];
    expect(await signingSecretMismatch(database.db, async () => kek)).toBeUndefined();
    const other = keyEncryptionKey('another-secret-of-at-least-32-characters!');
    const mismatch = (await signingSecretMismatch(database.db, async () => other)) ?? '';
    const kid = /\(key (\S+) does not decrypt\)/.exec(mismatch)?.[1];
    expect(mismatch).toMatch(
      /^not the secret the signing keys were stored under \(key \S+ does not decrypt\): start with the secret this database's keys were made with$/,
    );
    expect(current).toContain(kid);
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

  it('a retired ID-token key stays published for a token’s lifetime and a cache’s margin, then is withdrawn', async () => {
    // A token lives 5 minutes and a relying party may cache the key set 5 more: the key outlives both.
    expect(RETIRED_ID_TOKEN_KEY_SECONDS).toBeGreaterThanOrEqual(TOKEN_SECONDS + 300);
    const at = new Date(start.getTime() + 2 * day);
    const before = await currentSigningKey(database.db, 'RS256', kek, at);
    await rotateSigningKey(database.db, 'RS256', kek, at);
    const kids = async (ms: number) =>
      (await publishedKeys(database.db, new Date(at.getTime() + ms), 365)).map((key) => key.kid);
    expect(await kids(RETIRED_ID_TOKEN_KEY_SECONDS * 1000 - 1000)).toContain(before.kid);
    expect(await kids(RETIRED_ID_TOKEN_KEY_SECONDS * 1000 + 1000)).not.toContain(before.kid);
    // An evidence key retired at the same moment stays for the retention period.
    const evidence = await currentSigningKey(database.db, 'EdDSA', kek, at);
    await rotateSigningKey(database.db, 'EdDSA', kek, at);
    expect(await kids(30 * day)).toContain(evidence.kid);
  });

  it('revoked: leaves the key set at once, named among the revoked; a current key is replaced; checkpoints it signed are signed again', async () => {
    const { team } = await createTeam(
      database.db,
      { name: 'Revoked', adminEmail: 'owner@revoked.test' },
      () => new Date(),
    );
    const now = new Date();
    const key = await currentSigningKey(database.db, 'EdDSA', kek, now);
    // The team's chain, cut by retention, starts at a checkpoint the key signed.
    for (let i = 0; i < 3; i++) {
      await recordAudit(database.db, {
        teamId: team.id,
        actor: SYSTEM_ACTOR,
        at: new Date(now.getTime() - (10 - i) * day),
        action: 'team.branding_changed',
        target: team.id,
        details: { n: i },
      });
    }
    // Another team's chain, with no checkpoint: nothing of it is signed again, nor is it told.
    const { team: bystander } = await createTeam(
      database.db,
      { name: 'Bystander', adminEmail: 'owner@bystander.test' },
      () => new Date(),
    );
    await recordAudit(database.db, {
      teamId: bystander.id,
      actor: SYSTEM_ACTOR,
      at: now,
      action: 'team.branding_changed',
      target: bystander.id,
      details: {},
    });
    await sealAuditChains(database.db);
    await purgeAudit(database.db, new Date(now.getTime() - day), { kek: async () => kek, now });
    const [head] = await database.db.execute<{ checkpoint_jws: string }>(
      sql`select checkpoint_jws from audit_chain_heads where team_id = ${team.id}`,
    );
    expect(signedBy(head?.checkpoint_jws ?? '')).toBe(key.kid);

    const revoked = await revokeKey(
      { db: database.db, clock: () => now, kek: async () => kek },
      key.kid,
      'key compromised',
    );
    expect(revoked).toMatchObject({
      kid: key.kid,
      alg: 'EdDSA',
      was_current: true,
      checkpoints_signed_again: 1,
    });
    const published = await publishedKeys(database.db, now, 365);
    expect(published.map((k) => k.kid)).not.toContain(key.kid);
    expect(await revokedKeys(database.db, now, 365)).toEqual(
      expect.arrayContaining([
        { kid: key.kid, alg: 'EdDSA', revoked_at: now.toISOString(), reason: 'key compromised' },
      ]),
    );
    // The next signature makes a new current key; the checkpoint now carries it, and the chain verifies.
    const next = await currentSigningKey(database.db, 'EdDSA', kek, now);
    expect(next.kid).not.toBe(key.kid);
    const [after] = await database.db.execute<{ checkpoint_jws: string }>(
      sql`select checkpoint_jws from audit_chain_heads where team_id = ${team.id}`,
    );
    expect(signedBy(after?.checkpoint_jws ?? '')).toBe(next.kid);
    const report = await verifyAuditChain(
      database.db,
      team.id,
      await publishedKeys(database.db, new Date(), 365),
    );
    expect(report.broken).toBeNull();
    const told = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, team.id), eq(auditLog.action, 'signing_key.revoked')));
    const bystanderTold = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, bystander.id), eq(auditLog.action, 'signing_key.revoked')));
    expect(bystanderTold).toEqual([]);
    expect(told.map((row) => [row.target, row.actorEmail, row.details])).toEqual([
      [
        key.kid,
        'Vouch operator (CLI)',
        { alg: 'EdDSA', reason: 'key compromised', audit_checkpoint_signed_again: true },
      ],
    ]);
    // Revoked once: a second revocation finds nothing to revoke.
    await expect(
      revokeKey({ db: database.db, clock: () => now, kek: async () => kek }, key.kid, null),
    ).rejects.toMatchObject({ appCode: 'NOT_FOUND' });
  });

  it('derive the key-encryption key as documented: HKDF-SHA256, salt "vouch signing keys", info "private key encryption v1"', () => {
    const secret = 'a-signing-key-secret-of-at-least-32-characters';
    const expected = Buffer.from(
      hkdfSync(
        'sha256',
        Buffer.from(secret),
        Buffer.from('vouch signing keys'),
        Buffer.from('private key encryption v1'),
        32,
      ),
    );
    expect(Buffer.from(keyEncryptionKey(secret)).toString('hex')).toBe(expected.toString('hex'));
    expect(keyEncryptionKey(secret)).toHaveLength(32);
  });

  it('name a revoked key for the retention period only; revoking a retired key says it was not current', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const old = await rotateSigningKey(database.db, 'EdDSA', kek, new Date(now.getTime() - 20 * day));
    await rotateSigningKey(database.db, 'EdDSA', kek, new Date(now.getTime() - 19 * day));
    const revokedOld = await revokeKey(
      { db: database.db, clock: () => new Date(now.getTime() - 10 * day), kek: async () => kek },
      old.kid,
      null,
    );
    expect(revokedOld).toMatchObject({ kid: old.kid, was_current: false });
    const named = async (retentionDays: number) =>
      (await revokedKeys(database.db, now, retentionDays)).some((key) => key.kid === old.kid);
    expect(await named(11)).toBe(true);
    expect(await named(10)).toBe(true);
    expect(await named(9)).toBe(false);
  });

  it('sign a document flattened and claims compact, each naming its key and type', async () => {
    const now = new Date();
    const key = await currentSigningKey(database.db, 'EdDSA', kek, now);
    const keys = await publishedKeys(database.db, now, 365);
    const flattened = await signFlattened(key, 'vouch-test+jws', { b: 2, a: 1 });
    const verified = await flattenedVerify(flattened, createLocalJWKSet({ keys }));
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: key.kid, typ: 'vouch-test+jws' });
    // RFC 8785: members sorted, no spaces.
    expect(new TextDecoder().decode(verified.payload)).toBe('{"a":1,"b":2}');
    const compact = await signClaims(database.db, kek, now, 'vouch-claims', { z: true, a: [1] });
    expect(signedBy(compact)).toBe(key.kid);
    expect(await verifiedClaims(compact, 'vouch-claims', keys)).toEqual({ a: [1], z: true });
    expect(await verifiedClaims(compact, 'another-type', keys)).toBeNull();
    expect(await verifiedClaims(`${compact}x`, 'vouch-claims', keys)).toBeNull();
    expect(signedBy('not a jws')).toBeNull();
    const { payload } = await compactVerify(compact, createLocalJWKSet({ keys }));
    expect(new TextDecoder().decode(payload)).toBe('{"a":[1],"z":true}');
  });

  it('the development secret is made once and read once per process; a failed read is not kept', async () => {
    // The same database handle answers the same key, made once (a second process agrees on it).
    const first = await signingKeyEncryptionKey(database.db, undefined);
    expect(await signingKeyEncryptionKey(database.db, undefined)).toBe(first);
    const [stored] = await database.db
      .select()
      .from(appSecrets)
      .where(eq(appSecrets.name, 'signing_key_secret'));
    expect(stored?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first).toEqual(keyEncryptionKey(stored?.value ?? ''));
    // A configured secret is used as given, and is not the stored one's key.
    expect(await signingKeyEncryptionKey(database.db, 'a-configured-secret-of-at-least-32-chars')).toEqual(
      keyEncryptionKey('a-configured-secret-of-at-least-32-chars'),
    );
    // A database out of reach fails the read, and the next read (once it is there) succeeds.
    const adminUrl = inject('adminDatabaseUrl');
    const name = `vouch_late_${process.pid}`;
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const late = connectDatabase(url.toString(), { max: 1 });
    try {
      await expect(signingKeyEncryptionKey(late.db, undefined)).rejects.toBeDefined();
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name} template ${inject('templateDatabase')}`);
      await admin.end();
      expect(await signingKeyEncryptionKey(late.db, undefined)).toHaveLength(32);
    } finally {
      await late.close();
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

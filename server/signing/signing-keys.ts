import { hkdfSync } from 'node:crypto';
import { and, desc, eq, gte, isNull, or } from 'drizzle-orm';
import {
  CompactEncrypt,
  type CryptoKey,
  calculateJwkThumbprint,
  compactDecrypt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import type { Db, Queryable } from '@/db/client';
import { type SigningAlgorithm, signingKeys } from '@/db/schema';

/**
 * The key the private halves are encrypted under: 32 bytes derived from SIGNING_KEY_SECRET with
 * HKDF-SHA256, so the configured secret itself never touches a key and can be any long string.
 */
export function keyEncryptionKey(secret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, 'vouch signing keys', 'private key encryption v1', 32));
}

/** A key ready to sign with. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: CryptoKey;
}

const ENCRYPTION = { alg: 'dir', enc: 'A256GCM' } as const;

async function newKeyRow(alg: SigningAlgorithm, kek: Uint8Array) {
  const pair =
    alg === 'EdDSA'
      ? await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
      : await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const privateJwk = await exportJWK(pair.privateKey);
  const privateJwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(privateJwk)))
    .setProtectedHeader({ ...ENCRYPTION, kid })
    .encrypt(kek);
  return { kid, alg, publicJwk: { ...publicJwk, kid, alg, use: 'sig' }, privateJwe };
}

/**
 * Makes a new key current for `alg` and retires the one before it (which stays published), in one
 * transaction. The partial unique index keeps one current key per algorithm whatever runs at once.
 * The current key must open with `kek` first: a rotation under another secret (mistyped, or unset
 * where the service has one) would leave a current key the service cannot use.
 */
export async function rotateSigningKey(
  db: Db,
  alg: SigningAlgorithm,
  kek: Uint8Array,
  now: Date,
): Promise<{ kid: string; retired: string[] }> {
  const [current] = await db
    .select({ kid: signingKeys.kid, alg: signingKeys.alg, privateJwe: signingKeys.privateJwe })
    .from(signingKeys)
    .where(and(eq(signingKeys.alg, alg), isNull(signingKeys.retiredAt)));
  if (current) await unlock(current, kek);
  const row = await newKeyRow(alg, kek);
  return db.transaction(async (tx) => {
    const retired = await tx
      .update(signingKeys)
      .set({ retiredAt: now })
      .where(and(eq(signingKeys.alg, alg), isNull(signingKeys.retiredAt)))
      .returning({ kid: signingKeys.kid });
    await tx.insert(signingKeys).values({ ...row, createdAt: now });
    return { kid: row.kid, retired: retired.map((r) => r.kid) };
  });
}

async function unlock(row: { kid: string; alg: SigningAlgorithm; privateJwe: string }, kek: Uint8Array) {
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(row.privateJwe, kek));
  } catch {
    throw new Error(
      `signing key ${row.kid} cannot be decrypted: SIGNING_KEY_SECRET is not the secret it was stored under`,
    );
  }
  const jwk = JSON.parse(new TextDecoder().decode(plaintext)) as JWK;
  return { kid: row.kid, alg: row.alg, privateKey: (await importJWK(jwk, row.alg)) as CryptoKey };
}

/**
 * The current key of `alg`, made on first use: two processes that find none at once both make
 * one, and the unique index keeps the first; the other takes it.
 */
export async function currentSigningKey(
  db: Db,
  alg: SigningAlgorithm,
  kek: Uint8Array,
  now: Date,
): Promise<SigningKey> {
  const current = () =>
    db
      .select({ kid: signingKeys.kid, alg: signingKeys.alg, privateJwe: signingKeys.privateJwe })
      .from(signingKeys)
      .where(and(eq(signingKeys.alg, alg), isNull(signingKeys.retiredAt)));
  let [row] = await current();
  if (!row) {
    await db
      .insert(signingKeys)
      .values({ ...(await newKeyRow(alg, kek)), createdAt: now })
      .onConflictDoNothing();
    [row] = await current();
  }
  if (!row) throw new Error(`no current ${alg} signing key after creating one`);
  return unlock(row, kek);
}

/**
 * The public keys anyone may verify with: the current ones, and those retired within
 * `retentionDays` (AUDIT_RETENTION_DAYS), newest first. Each carries `kid`, `alg` and `use`.
 */
export async function publishedKeys(db: Queryable, now: Date, retentionDays: number): Promise<JWK[]> {
  const since = new Date(now.getTime() - retentionDays * 86_400_000);
  const rows = await db
    .select({ publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(or(isNull(signingKeys.retiredAt), gte(signingKeys.retiredAt, since)))
    .orderBy(desc(signingKeys.createdAt));
  return rows.map((row) => row.publicJwk as JWK);
}

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
 * The key the private halves are encrypted under: 32 bytes derived from KEYS_SECRET with
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
      `signing key ${row.kid} cannot be decrypted: KEYS_SECRET is not the secret it was stored under`,
    );
  }
  const jwk = JSON.parse(new TextDecoder().decode(plaintext)) as JWK;
  return { kid: row.kid, alg: row.alg, privateKey: (await importJWK(jwk, row.alg)) as CryptoKey };
}

/**
 * Why the service's secret cannot unlock the signing keys in use, or undefined (there are none
 * yet, or every current key unlocks). Checked at start-up: a database restored with another
 * KEYS_SECRET than the one it was stored under would otherwise serve on, and fail at the
 * first evidence record or ID token it signs.
 */
export async function signingSecretMismatch(
  db: Db,
  kekOf: () => Promise<Uint8Array>,
): Promise<string | undefined> {
  const current = await db
    .select({ kid: signingKeys.kid, alg: signingKeys.alg, privateJwe: signingKeys.privateJwe })
    .from(signingKeys)
    .where(isNull(signingKeys.retiredAt));
  // The secret is looked at only when there are keys to unlock: a first start makes nothing.
  const kek = current.length > 0 ? await kekOf() : undefined;
  for (const row of current) {
    try {
      await compactDecrypt(row.privateJwe, kek as Uint8Array);
    } catch {
      return `not the secret the signing keys were stored under (key ${row.kid} does not decrypt): start with the secret this database's keys were made with`;
    }
  }
  return undefined;
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
 * How long a retired ID-token key (RS256) stays published: what it signed lives 5 minutes (an ID
 * token), a relying party may cache the key set 5 minutes more, and as much again for clocks and
 * retries. An evidence key (EdDSA) stays for AUDIT_RETENTION_DAYS: records outlive tokens.
 */
export const RETIRED_ID_TOKEN_KEY_SECONDS = 15 * 60;

/**
 * The public keys anyone may verify with, newest first, each with `kid`, `alg` and `use`: the
 * current ones, evidence keys retired within `retentionDays` (AUDIT_RETENTION_DAYS), ID-token keys
 * retired within RETIRED_ID_TOKEN_KEY_SECONDS; never a revoked one.
 */
export async function publishedKeys(db: Queryable, now: Date, retentionDays: number): Promise<JWK[]> {
  const evidenceSince = new Date(now.getTime() - retentionDays * 86_400_000);
  const idTokenSince = new Date(now.getTime() - RETIRED_ID_TOKEN_KEY_SECONDS * 1000);
  const rows = await db
    .select({ publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(
      and(
        isNull(signingKeys.revokedAt),
        or(
          isNull(signingKeys.retiredAt),
          and(eq(signingKeys.alg, 'EdDSA'), gte(signingKeys.retiredAt, evidenceSince)),
          and(eq(signingKeys.alg, 'RS256'), gte(signingKeys.retiredAt, idTokenSince)),
        ),
      ),
    )
    .orderBy(desc(signingKeys.createdAt));
  return rows.map((row) => row.publicJwk as JWK);
}

/** A key the operator revoked, as the key set names it (its public half withdrawn). */
export interface RevokedKey {
  kid: string;
  alg: SigningAlgorithm;
  revoked_at: string;
  reason: string | null;
}

/** The keys revoked within `retentionDays`, newest first: what they signed must fail saying why. */
export async function revokedKeys(db: Queryable, now: Date, retentionDays: number): Promise<RevokedKey[]> {
  const since = new Date(now.getTime() - retentionDays * 86_400_000);
  const rows = await db
    .select({
      kid: signingKeys.kid,
      alg: signingKeys.alg,
      revokedAt: signingKeys.revokedAt,
      reason: signingKeys.revocationReason,
    })
    .from(signingKeys)
    .where(gte(signingKeys.revokedAt, since))
    .orderBy(desc(signingKeys.revokedAt));
  return rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    revoked_at: (row.revokedAt as Date).toISOString(),
    reason: row.reason,
  }));
}

/**
 * Revokes a key at once (a key thought compromised): it is retired if it was current (the next
 * signature makes a new key) and withdrawn from the key set. Answers the key, or null when there
 * is no such key or it was revoked already.
 */
export async function revokeSigningKey(
  db: Queryable,
  kid: string,
  reason: string | null,
  now: Date,
): Promise<{ kid: string; alg: SigningAlgorithm; wasCurrent: boolean } | null> {
  const [before] = await db
    .select({ retiredAt: signingKeys.retiredAt })
    .from(signingKeys)
    .where(and(eq(signingKeys.kid, kid), isNull(signingKeys.revokedAt)));
  if (!before) return null;
  const [row] = await db
    .update(signingKeys)
    .set({ revokedAt: now, revocationReason: reason, retiredAt: before.retiredAt ?? now })
    .where(and(eq(signingKeys.kid, kid), isNull(signingKeys.revokedAt)))
    .returning({ kid: signingKeys.kid, alg: signingKeys.alg });
  return row ? { ...row, wasCurrent: before.retiredAt === null } : null;
}

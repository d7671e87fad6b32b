import { sql } from 'drizzle-orm';
import { check, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, timestamptz } from './columns';
import { oneOf, SIGNING_ALGORITHMS, type SigningAlgorithm } from './values';

/**
 * The service's signing keys: Ed25519 (EdDSA) for evidence records, RS256 for ID tokens. The
 * public half is published at /.well-known/jwks.json; the private half is kept only encrypted
 * (a JWE, `dir` + A256GCM, under a key derived from KEYS_SECRET). One key per algorithm is
 * current (`retired_at` null). A retired evidence key stays published for AUDIT_RETENTION_DAYS, so
 * what it signed keeps verifying; a retired ID-token key only for a token's lifetime and a cache's
 * margin. A revoked key (`revoked_at`: the operator's `keys signing-revoke`) is withdrawn at once,
 * and the key set names it among the revoked, so what it signed fails saying why.
 */
export const signingKeys = pgTable(
  'signing_keys',
  {
    /** The JWK thumbprint (RFC 7638) of the public key: its `kid`. */
    kid: text('kid').primaryKey(),
    alg: text('alg').$type<SigningAlgorithm>().notNull(),
    publicJwk: jsonb('public_jwk').$type<Record<string, unknown>>().notNull(),
    /** The private JWK, encrypted: a JWE in compact serialization. */
    privateJwe: text('private_jwe').notNull(),
    createdAt: createdAt(),
    retiredAt: timestamptz('retired_at'),
    revokedAt: timestamptz('revoked_at'),
    /** Why the operator revoked it (published beside the kid: "key compromised", say). */
    revocationReason: text('revocation_reason'),
  },
  (t) => [
    check('signing_keys_alg_check', oneOf(t.alg, SIGNING_ALGORITHMS)),
    uniqueIndex('signing_keys_one_current_per_alg').on(t.alg).where(sql`${t.retiredAt} is null`),
  ],
);

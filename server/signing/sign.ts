import canonicalize from 'canonicalize';
import {
  CompactSign,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  type FlattenedJWS,
  FlattenedSign,
  type JWK,
} from 'jose';
import type { Db } from '@/db/client';
import { currentSigningKey, type SigningKey } from './signing-keys';

/**
 * Signs `claims` (their RFC 8785 canonical JSON) with the current EdDSA key, as a compact JWS
 * whose header names the key and `typ`. For what the service vouches for apart from the evidence
 * records themselves (the audit chain's checkpoints).
 */
export async function signClaims(
  db: Db,
  kek: Uint8Array,
  now: Date,
  typ: string,
  claims: Record<string, unknown>,
): Promise<string> {
  const key = await currentSigningKey(db, 'EdDSA', kek, now);
  return new CompactSign(new TextEncoder().encode(canonicalize(claims) ?? ''))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
    .sign(key.privateKey);
}

/**
 * A document's RFC 8785 canonical JSON signed with `key` as a JWS in flattened JSON serialization
 * (header `alg`, `kid`, `typ`): what the evidence records are.
 */
export function signFlattened(key: SigningKey, typ: string, document: object): Promise<FlattenedJWS> {
  return new FlattenedSign(new TextEncoder().encode(canonicalize(document) ?? ''))
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
    .sign(key.privateKey);
}

/** The key id a compact JWS names, or null for something that is not one. */
export function signedBy(jws: string): string | null {
  try {
    return decodeProtectedHeader(jws).kid ?? null;
  } catch {
    return null;
  }
}

/** The claims of a compact JWS of `typ` signed by one of `keys`, or null when it is not that. */
export async function verifiedClaims(
  jws: string,
  typ: string,
  keys: JWK[],
): Promise<Record<string, unknown> | null> {
  try {
    const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet({ keys }), {
      algorithms: ['EdDSA'],
    });
    if (protectedHeader.typ !== typ) return null;
    return JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch {
    return null;
  }
}

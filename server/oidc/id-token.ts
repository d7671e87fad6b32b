import { SignJWT } from 'jose';
import type { SigningKey } from '@/server/signing/signing-keys';
import type { VerifiedClaimsEntry } from './verified-claims-request';

/** How long an ID token is valid, and the access token beside it. */
export const TOKEN_SECONDS = 300;

/** The verified names, and when they were verified. */
export interface Verdict {
  verifiedAt: Date;
}

/**
 * The `verified_claims` of an ID token (OpenID Connect for Identity Assurance 1.0): one entry
 * per entry asked for, echoing its trust framework and assurance level, with the time of the check
 * and the given and family names it compared with the document, as plain values (`"given_name":
 * "Ada"`): how the request asked to match them (Okta's `fuzzy`) belongs to the request, not to what
 * is asserted. Nothing it did not send.
 */
export function verifiedClaims(
  asked: VerifiedClaimsEntry[],
  verdict: Verdict & { compared: Record<string, string> },
) {
  return asked.map((entry) => ({
    verification: {
      trust_framework: entry.trustFramework,
      ...(entry.assuranceLevel ? { assurance_level: entry.assuranceLevel } : {}),
      time: verdict.verifiedAt.toISOString(),
    },
    claims: Object.fromEntries(
      ['given_name', 'family_name'].flatMap((name) => {
        const value = entry.claims[name]?.value;
        // Only the value the document was compared with: another entry's other value was not.
        if (!value || value !== verdict.compared[name]) return [];
        return [[name, value]];
      }),
    ),
  }));
}

/** The ID token, signed RS256 with the service's current key (its kid in the header). */
export function signIdToken(
  key: SigningKey,
  claims: {
    issuer: string;
    audience: string;
    subject: string;
    nonce: string | null;
    now: Date;
    verifiedClaims: unknown;
    /** False for a test-mode client's case (simulated checks): said in the token, never left to guess. */
    livemode: boolean;
    /** How the person authenticated just now (RFC 8176), when it was more than the document check. */
    amr?: string[];
  },
): Promise<string> {
  const iat = Math.floor(claims.now.getTime() / 1000);
  return new SignJWT({
    ...(claims.nonce !== null ? { nonce: claims.nonce } : {}),
    verified_claims: claims.verifiedClaims,
    vouch_livemode: claims.livemode,
    ...(claims.amr?.length ? { amr: claims.amr } : {}),
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setSubject(claims.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + TOKEN_SECONDS)
    .sign(key.privateKey);
}

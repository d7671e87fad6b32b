import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
import { OAuthError } from './oauth-error';

/**
 * What a relying party asks for under `claims.id_token.verified_claims` (OpenID Connect for
 * Identity Assurance 1.0; Okta's custom IDV sends an array): each entry's trust framework and
 * assurance level, echoed in the ID token as asked, and the claims with the values it holds
 * (`{value, fuzzy}`), which the document is compared against.
 */
export interface VerifiedClaimsEntry {
  trustFramework: string;
  assuranceLevel: string | null;
  claims: Record<string, { value: string | null; fuzzy: boolean }>;
}

/** The trust frameworks accepted: Okta writes its one both ways. */
export const TRUST_FRAMEWORKS = ['IDV-DELEGATED', 'IDV_DELEGATED'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A `{value}` member, or the bare value an older request sent. */
function memberValue(member: unknown): string | null {
  if (typeof member === 'string') return member;
  if (isObject(member) && typeof member.value === 'string') return member.value;
  return null;
}

/**
 * A requested claim as `{value, fuzzy}`: Okta's current `{value, fuzzy: true}`, a bare string, or
 * its older `{fuzzy: "<value>"}`.
 */
function claimAskedFor(member: unknown): { value: string | null; fuzzy: boolean } {
  if (typeof member === 'string') return { value: member, fuzzy: false };
  if (!isObject(member)) return { value: null, fuzzy: false };
  if (typeof member.fuzzy === 'string') return { value: member.fuzzy, fuzzy: true };
  return { value: typeof member.value === 'string' ? member.value : null, fuzzy: member.fuzzy === true };
}

/**
 * The `claims` parameter read: a JSON string (a form body, RFC 9126) or an object (a JSON body),
 * with `id_token.verified_claims` an array or one object. Nothing asked: an empty list.
 */
export function readVerifiedClaimsRequest(claims: unknown): VerifiedClaimsEntry[] {
  if (claims === undefined || claims === null || claims === '') return [];
  let parsed: unknown = claims;
  if (typeof claims === 'string') {
    try {
      parsed = JSON.parse(claims);
    } catch {
      throw new OAuthError('invalid_request', 'claims is not JSON');
    }
  }
  if (!isObject(parsed)) throw new OAuthError('invalid_request', 'claims must be a JSON object');
  // A form's claims arrive as a JSON string, read only here: held to the same rule as every parameter.
  const problem = jsonInputProblem(parsed, { oneLine: true });
  if (problem) throw new OAuthError('invalid_request', `claims: ${describeJsonInputProblem(problem)}`);
  const idToken = parsed.id_token;
  if (idToken === undefined) return [];
  if (!isObject(idToken)) throw new OAuthError('invalid_request', 'claims.id_token must be an object');
  const requested = idToken.verified_claims;
  if (requested === undefined) return [];
  const entries = Array.isArray(requested) ? requested : [requested];
  return entries.map((entry, index) => {
    const at = `claims.id_token.verified_claims[${index}]`;
    if (!isObject(entry) || !isObject(entry.verification)) {
      throw new OAuthError('invalid_request', `${at} must be an object with a verification object`);
    }
    const framework = memberValue(entry.verification.trust_framework);
    if (!framework || !(TRUST_FRAMEWORKS as readonly string[]).includes(framework)) {
      throw new OAuthError(
        'invalid_request',
        `${at}.verification.trust_framework must be ${TRUST_FRAMEWORKS.join(' or ')}${framework ? `, not ${framework}` : ''}`,
      );
    }
    if (entry.claims !== undefined && !isObject(entry.claims)) {
      throw new OAuthError('invalid_request', `${at}.claims must be an object`);
    }
    return {
      trustFramework: framework,
      assuranceLevel: memberValue(entry.verification.assurance_level),
      claims: Object.fromEntries(
        Object.entries(entry.claims ?? {}).map(([name, member]) => [name, claimAskedFor(member)]),
      ),
    };
  });
}

/** The value asked for under `name` in any entry (the first that has one). */
export function requestedValue(entries: VerifiedClaimsEntry[], name: string): string | null {
  return requestedClaim(entries, name)?.value ?? null;
}

/** The first entry's request of claim `name` that carries a value, with its fuzzy flag. */
export function requestedClaim(
  entries: VerifiedClaimsEntry[],
  name: string,
): { value: string | null; fuzzy: boolean } | null {
  for (const entry of entries) {
    const claim = entry.claims[name];
    if (claim?.value) return claim;
  }
  return null;
}

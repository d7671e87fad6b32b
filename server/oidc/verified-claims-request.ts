import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
import { emailAddress } from '@/server/platform/wire-fields';
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
 * The `claims` parameter read (OpenID Connect Core §5.5): the `verified_claims` asked for in the ID
 * token, and every value the request holds for the person's e-mail address, with where it was.
 */
export interface ClaimsRequest {
  verifiedClaims: VerifiedClaimsEntry[];
  /** Each `email` given with a value: `claims.id_token.email`, `claims.userinfo.email`, or in a verified_claims entry. */
  emails: Array<{ at: string; value: string }>;
}

/**
 * The claim of the person's address (OpenID Connect Core §5.1): a claim's name, which happens to be
 * the e-mail method's key too.
 */
export const EMAIL_CLAIM = 'email';

/** The member of `claims` named `name` (`id_token`, `userinfo`): an object, or absent. */
function memberObject(parsed: Record<string, unknown>, name: string): Record<string, unknown> | null {
  const member = parsed[name];
  if (member === undefined) return null;
  if (!isObject(member)) throw new OAuthError('invalid_request', `claims.${name} must be an object`);
  return member;
}

/** The verified_claims asked for in `id_token` (an array, or one object). */
function readEntries(idToken: Record<string, unknown> | null): VerifiedClaimsEntry[] {
  const requested = idToken?.verified_claims;
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

/**
 * The `claims` parameter read: a JSON string (a form body, RFC 9126) or an object (a JSON body).
 * Nothing asked: no entries and no address.
 */
export function readClaimsRequest(claims: unknown): ClaimsRequest {
  if (claims === undefined || claims === null || claims === '') return { verifiedClaims: [], emails: [] };
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
  const idToken = memberObject(parsed, 'id_token');
  const userinfo = memberObject(parsed, 'userinfo');
  const verifiedClaims = readEntries(idToken);
  // An individual claim asked for with the value the client holds (Core §5.5.1: `{"value": …}`),
  // where Core puts it, and inside each verified_claims entry, where Okta does.
  const emails = [
    { at: `claims.id_token.${EMAIL_CLAIM}`, value: claimAskedFor(idToken?.[EMAIL_CLAIM]).value },
    { at: `claims.userinfo.${EMAIL_CLAIM}`, value: claimAskedFor(userinfo?.[EMAIL_CLAIM]).value },
    ...verifiedClaims.map((entry, index) => ({
      at: `claims.id_token.verified_claims[${index}].claims.${EMAIL_CLAIM}`,
      value: entry.claims[EMAIL_CLAIM]?.value ?? null,
    })),
  ].flatMap(({ at, value }) => (value ? [{ at, value }] : []));
  return { verifiedClaims, emails };
}

/**
 * The person's address: the one value of every place in the request that holds one (compared
 * without regard to case), else the login_hint when it is an address. A value that is no address,
 * two places naming different addresses, or none at all are refused, naming where.
 */
export function requestedEmail(
  request: ClaimsRequest,
  person: { loginHint: string; topLevelEmail: boolean },
): string {
  const isAddress = (value: string) => emailAddress.safeParse(value).success;
  const [first, ...others] = request.emails;
  if (!first) {
    if (isAddress(person.loginHint)) return person.loginHint;
    throw new OAuthError(
      'invalid_request',
      `No e-mail address for the person: send it as claims.id_token.${EMAIL_CLAIM} or claims.userinfo.${EMAIL_CLAIM} ({"value": "…"}, OpenID Connect Core §5.5.1) or in a verified_claims entry's claims, or an e-mail address as login_hint.${
        person.topLevelEmail
          ? ` A top-level ${EMAIL_CLAIM} parameter is not read: OAuth ignores the parameters it does not define (RFC 6749 §3.1).`
          : ''
      }`,
    );
  }
  for (const place of request.emails) {
    if (!isAddress(place.value))
      throw new OAuthError('invalid_request', `${place.at} is not an e-mail address`);
  }
  const differing = others.find((place) => place.value.toLowerCase() !== first.value.toLowerCase());
  if (differing) {
    throw new OAuthError(
      'invalid_request',
      `${first.at} and ${differing.at} give different e-mail addresses: send the person's one address.`,
    );
  }
  return first.value;
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

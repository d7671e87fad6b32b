import { createHash } from 'node:crypto';
import type { Db } from '@/db/client';
import { findCaseById } from '@/server/cases/case-repository';
import { authenticateClient, spendClientBudget } from '@/server/oidc/client-authentication';
import { flowOfCode, pushedRequest, redeemCode } from '@/server/oidc/flows';
import { signIdToken, TOKEN_SECONDS, verifiedClaims } from '@/server/oidc/id-token';
import { OAuthError } from '@/server/oidc/oauth-error';
import { requestedClaim, type VerifiedClaimsEntry } from '@/server/oidc/verified-claims-request';
import type { Clock } from '@/server/platform/clock';
import { randomBase62 } from '@/server/platform/ids';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { currentSigningKey } from '@/server/signing/signing-keys';
import type { DocumentCheck } from '@/server/verification/methods/method-module';
import { assertedCheck, checkShowsNames } from './asserted-check';

export interface ExchangeDeps {
  db: Db;
  clock: Clock;
  rateLimiters: RateLimiters;
  /** The caller's address: failed client authentications are counted by it. */
  clientAddress: string;
  issuer: string;
  kek: () => Promise<Uint8Array>;
}

/** base64url(SHA-256(verifier)): the S256 challenge a verifier answers (RFC 7636 §4.2). */
function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * POST /oauth2/token (authorization_code): the client authenticates, the code is redeemed once
 * within its 60 s by the client it was issued to, with the redirect URI and the PKCE verifier of
 * its request; the answer is an opaque short-lived access token (it serves nothing else) and the
 * ID token: RS256, `sub` the login_hint, the nonce, verified_claims asserting the names that
 * matched the document (checked by this case, or by the one its passkey leads back to: then `amr`
 * names the passkey). At most 60 a minute per client.
 */
/** The requested names the checked document showed, by claim: those the ID token may assert. */
function shownNames(asked: VerifiedClaimsEntry[], check: DocumentCheck): Record<string, string> {
  const given = requestedClaim(asked, 'given_name');
  const family = requestedClaim(asked, 'family_name');
  if (!given?.value || !family?.value) return {};
  const names = { given: given.value, family: family.value, fuzzy: given.fuzzy || family.fuzzy };
  return checkShowsNames(check, names) ? { given_name: given.value, family_name: family.value } : {};
}

export async function exchangeCode(
  deps: ExchangeDeps,
  input: { params: Record<string, unknown>; authorization: string | null },
) {
  const now = deps.clock();
  const { params } = input;
  const client = await authenticateClient(deps, params, input.authorization, now);
  await spendClientBudget(deps.rateLimiters, 'oidc_token', client);
  if (params.grant_type !== 'authorization_code') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code');
  }
  const code = typeof params.code === 'string' ? params.code : '';
  const verifier = typeof params.code_verifier === 'string' ? params.code_verifier : '';
  if (!code) throw new OAuthError('invalid_request', 'code is required');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  // Checked first and redeemed last: a request that fails a check does not spend the code.
  const flow = await flowOfCode(deps.db, code, now);
  if (!flow || flow.clientId !== client.id) {
    throw new OAuthError(
      'invalid_grant',
      'The code is unknown, expired, already used, or not this client’s.',
    );
  }
  const request = pushedRequest(flow);
  if (params.redirect_uri !== request.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri is not the one of the authorization request.');
  }
  if (s256(verifier) !== request.codeChallenge) {
    throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.');
  }
  const record = flow.caseId ? await findCaseById(deps.db, flow.caseId) : null;
  const check =
    record?.status === 'closed' && !record.redactedAt ? await assertedCheck(deps.db, record) : null;
  if (!record || !check) {
    throw new OAuthError(
      'invalid_grant',
      'The verification this code stood for is no longer there to assert.',
    );
  }
  if (!(await redeemCode(deps.db, flow, now))) {
    throw new OAuthError(
      'invalid_grant',
      'The code is unknown, expired, already used, or not this client’s.',
    );
  }
  const key = await currentSigningKey(deps.db, 'RS256', await deps.kek(), now);
  const idToken = await signIdToken(key, {
    issuer: deps.issuer,
    audience: client.id,
    subject: request.loginHint,
    nonce: request.nonce,
    now,
    livemode: record.livemode,
    amr: [...check.amr],
    verifiedClaims: verifiedClaims(request.verifiedClaims, {
      verifiedAt: check.checkedAt,
      compared: shownNames(request.verifiedClaims, check),
    }),
  });
  return {
    access_token: `vouch_at_${randomBase62(32)}`,
    token_type: 'Bearer',
    expires_in: TOKEN_SECONDS,
    id_token: idToken,
  };
}

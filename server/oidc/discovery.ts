import { SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { EMAIL_CLAIM, TRUST_FRAMEWORKS } from './verified-claims-request';

/** The endpoints of the OpenID provider, under its issuer (BASE_URL). */
export function providerEndpoints(issuer: string) {
  return {
    issuer,
    pushed_authorization_request_endpoint: `${issuer}/oauth2/par`,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
  };
}

/**
 * The claims a verified_claims request may name: the names the ID check compares with the document
 * (and the ID token asserts), and the person's address, which opens the case for them.
 */
export const CLAIMS_IN_VERIFIED_CLAIMS = ['given_name', 'family_name', EMAIL_CLAIM] as const;

/**
 * `/.well-known/openid-configuration` (OpenID Connect Discovery 1.0, RFC 8414, RFC 9126, OpenID
 * Connect for Identity Assurance 1.0): a narrow provider, authorization code with PKCE (S256)
 * through pushed requests only, ID tokens signed RS256 carrying verified_claims.
 */
export function openidConfiguration(issuer: string) {
  return {
    ...providerEndpoints(issuer),
    require_pushed_authorization_requests: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'profile', 'identity_assurance'],
    claims_parameter_supported: true,
    // `amr` when a passkey re-verified the person (RFC 8176: hwk, user).
    claims_supported: ['sub', 'amr', 'verified_claims', ...CLAIMS_IN_VERIFIED_CLAIMS],
    verified_claims_supported: true,
    trust_frameworks_supported: [...TRUST_FRAMEWORKS],
    claims_in_verified_claims_supported: [...CLAIMS_IN_VERIFIED_CLAIMS],
    authorization_response_iss_parameter_supported: true,
    ui_locales_supported: [...SUPPORTED_LOCALES],
  };
}

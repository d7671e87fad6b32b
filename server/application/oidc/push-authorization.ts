import type { Db } from '@/db/client';
import { supportedLocale } from '@/server/i18n/locales';
import { authenticateClient, spendClientBudget } from '@/server/oidc/client-authentication';
import { insertFlow, type PushedRequest, REQUEST_URI_SECONDS } from '@/server/oidc/flows';
import { OAuthError } from '@/server/oidc/oauth-error';
import type { OidcClient } from '@/server/oidc/oidc-clients';
import { readClaimsRequest, requestedEmail, requestedValue } from '@/server/oidc/verified-claims-request';
import type { Clock } from '@/server/platform/clock';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { findTemplateByName, type TemplateRecord } from '@/server/templates/templates';
import { CREATE_FIELDS_BY_METHOD } from '@/server/verification/methods/creation';
import { DOCUMENT_CHECKING_METHODS } from './asserted-check';

export interface PushAuthorizationDeps {
  db: Db;
  clock: Clock;
  rateLimiters: RateLimiters;
  /** The caller's address: failed client authentications are counted by it. */
  clientAddress: string;
}

/** A PKCE S256 challenge: base64url of a SHA-256 (43 characters; RFC 7636 allows 43 to 128). */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;

function text(params: Record<string, unknown>, name: string, max = 2000): string | null {
  const value = params[name];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a string`);
  if (value.length > max) throw new OAuthError('invalid_request', `${name} is longer than ${max} characters`);
  return value;
}

function required(params: Record<string, unknown>, name: string, max?: number): string {
  const value = text(params, name, max);
  if (value === null) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}

/**
 * The template a flow runs: the one its scope names (`idv_flow_<name>`), else the client's
 * default. It must be one an identity provider can fill: with a government ID (the names asked
 * for are compared with the document's) or a passkey (re-verifying a person whose document was
 * checked before), and with the fields its methods take at creation (a
 * manager, a question) set in it: nobody is there to give them per case.
 */
async function flowTemplate(db: Db, client: OidcClient, scopes: string[]): Promise<TemplateRecord> {
  const named = scopes.filter((scope) => scope.startsWith('idv_flow_')).map((scope) => scope.slice(9));
  if (named.length > 1) throw new OAuthError('invalid_scope', 'name one idv_flow_<template> scope at most');
  const name = named[0] ?? client.defaultTemplate;
  if (!name) {
    throw new OAuthError(
      'invalid_request',
      'No template: name one with the scope idv_flow_<template>, or give the client a default template.',
    );
  }
  const template = await findTemplateByName(db, { teamId: client.teamId, livemode: client.livemode }, name);
  if (!template)
    throw new OAuthError(
      'invalid_scope',
      `The team has no ${client.livemode ? 'live' : 'test'} template named "${name}" (a client names templates of its own mode).`,
    );
  // A method whose pass stands on a document check, which the ID token asserts (asserted-check.ts).
  if (!DOCUMENT_CHECKING_METHODS.some((method) => template.methods[method] === true)) {
    throw new OAuthError(
      'invalid_request',
      `The template ${name} reads no government ID (nor a passkey that leads back to one): an identity provider's flow must, to compare the names it sends with the document's.`,
    );
  }
  // A method that takes fields at creation (a manager, a question) must have them in the template.
  for (const [method, fields] of CREATE_FIELDS_BY_METHOD) {
    if (template.methods[method] === true && !template.settings[method]) {
      throw new OAuthError(
        'invalid_request',
        `The template ${name} leaves ${fields.join(' and ')} to each case, which an identity provider's flow cannot give.`,
      );
    }
  }
  return template;
}

/**
 * A pushed authorization request (RFC 9126) from an identity provider: the client authenticates,
 * the request is checked whole (code flow, an exact registered redirect URI, PKCE S256, `openid`,
 * the person by `login_hint` and an e-mail address, a template it can fill, the names it holds),
 * and kept for 60 s behind the request_uri answered. At most 60 a minute per client.
 */
export async function pushAuthorizationRequest(
  deps: PushAuthorizationDeps,
  input: { params: Record<string, unknown>; authorization: string | null },
): Promise<{ request_uri: string; expires_in: number }> {
  const now = deps.clock();
  const { params } = input;
  const client = await authenticateClient(deps, params, input.authorization, now);
  await spendClientBudget(deps.rateLimiters, 'oidc_par', client);
  if (params.request_uri !== undefined || params.request !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'A pushed request carries its parameters itself, not request_uri or request.',
    );
  }
  if (params.response_type !== 'code') {
    throw new OAuthError('unsupported_response_type', 'response_type must be code');
  }
  const redirectUri = required(params, 'redirect_uri');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new OAuthError('invalid_request', 'The redirect_uri is not registered for this client.');
  }
  const codeChallenge = required(params, 'code_challenge', 128);
  if (params.code_challenge_method !== 'S256' || !CODE_CHALLENGE.test(codeChallenge)) {
    throw new OAuthError(
      'invalid_request',
      'PKCE is required: a code_challenge with code_challenge_method S256.',
    );
  }
  const scope = required(params, 'scope', 1000);
  const scopes = scope.split(' ').filter(Boolean);
  if (!scopes.includes('openid')) throw new OAuthError('invalid_scope', 'scope must include openid');
  const loginHint = required(params, 'login_hint', 256);
  const template = await flowTemplate(deps.db, client, scopes);
  const claims = readClaimsRequest(params.claims);
  const { verifiedClaims } = claims;
  for (const name of ['given_name', 'family_name']) {
    if (!requestedValue(verifiedClaims, name)) {
      throw new OAuthError(
        'invalid_request',
        `claims.id_token.verified_claims must ask for ${name} with the value you hold: it is compared with the document's.`,
      );
    }
  }
  const subjectEmail = requestedEmail(claims, { loginHint, topLevelEmail: params.email !== undefined });
  const locales = (text(params, 'ui_locales', 200) ?? '').split(' ').filter(Boolean);
  const request: PushedRequest = {
    redirectUri,
    state: text(params, 'state', 1000),
    nonce: text(params, 'nonce', 1000),
    codeChallenge,
    scope,
    loginHint,
    subjectEmail,
    locale: locales.map((tag) => supportedLocale(tag)).find((locale) => locale !== null) ?? null,
    template: template.name,
    verifiedClaims,
  };
  const requestUri = await insertFlow(deps.db, { clientId: client.id, teamId: client.teamId, request, now });
  return { request_uri: requestUri, expires_in: REQUEST_URI_SECONDS };
}

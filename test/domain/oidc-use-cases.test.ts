/**
 * The OpenID provider's use cases called in-process against a real PostgreSQL (the integration
 * suite drives the same over HTTP with openid-client): a pushed request checked whole, its client
 * authenticated, authorize opening the case and binding the flow to the browser, the verdict
 * handed back, and the code redeemed for an ID token that verifies against the published keys.
 * Every refusal is held to its exact OAuth error and description, so that a check loosened or
 * dropped fails here.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditLog, caseSteps, cases, oidcFlows, webhookEndpoints } from '@/db/schema';
import { simulateCase } from '@/server/application/cases/simulate-case';
import { authorizeFlow } from '@/server/application/oidc/authorize-flow';
import { clientActions } from '@/server/application/oidc/client-actions';
import { exchangeCode } from '@/server/application/oidc/exchange-code';
import { providerFlowOf } from '@/server/application/oidc/provider-flow';
import { pushAuthorizationRequest } from '@/server/application/oidc/push-authorization';
import { relyingPartyReturn } from '@/server/application/oidc/return-to-relying-party';
import { templateActions } from '@/server/application/templates/template-actions';
import { OPERATOR_ACTOR } from '@/server/audit/record-audit';
import { findCaseById } from '@/server/cases/case-repository';
import { openidConfiguration } from '@/server/oidc/discovery';
import { FLOW_RETURN_SECONDS, flowIdOf } from '@/server/oidc/flows';
import { isOAuthError, OAuthError, oauthErrorResponse } from '@/server/oidc/oauth-error';
import { readClaimsRequest, requestedClaim } from '@/server/oidc/verified-claims-request';
import type { Clock } from '@/server/platform/clock';
import { AppError } from '@/server/platform/errors';
import { logger } from '@/server/platform/logger';
import { keyEncryptionKey, publishedKeys } from '@/server/signing/signing-keys';
import { createTeam } from '@/server/teams/manage-teams';
import { completeSteps } from '@/server/verification/case-state';
import { applyIdentityResult } from '@/server/verification/methods/government-id/step';
import { ceremonyCase, passkeyChallenge, provePasskeyStep } from '@/server/verification/methods/passkey/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';
import { enrollPasskey, TEST_RELYING_PARTY } from '@/test/support/passkeys';
import { verifiedClaimsProblems, verifiedClaimsRequestProblems } from '@/test/support/verified-claims-schema';

const ISSUER = 'https://vouch.test';
const PAGES = 'https://verify.vouch.test';
const REDIRECT = 'https://acme.okta.com/idp/identity-verification/callback';
const kek = keyEncryptionKey('an-oidc-signing-key-secret-of-32-characters');

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;
let client: { id: string; secret: string };
let now = new Date();
const clock: Clock = () => new Date(now);
let address = 0;

/** How the operator's CLI acts on the team's templates, in one mode. */
function teamContext(livemode: boolean) {
  return {
    db: database.db,
    teamId,
    actor: OPERATOR_ACTOR,
    clock,
    jobs: inProcess.jobs,
    rateLimiters: inProcess.rateLimiters,
    scope: { teamId, livemode },
  };
}

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  teamId = (await createTeam(database.db, { name: 'Provider', adminEmail: 'o@provider.test' }, clock)).team
    .id;
  const ctx = teamContext(false);
  for (const template of [
    { name: 'helpdesk', verification_methods: { government_id: true } },
    { name: 'no-id', verification_methods: { email: true } },
    { name: 'new-hire', verification_methods: { government_id: true, manager: true } },
  ]) {
    await templateActions.create(ctx, template);
  }
  const created = await clientActions.create(
    { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
    { name: 'Okta', redirect_uris: [REDIRECT], default_template: 'helpdesk', mode: 'test' },
  );
  client = { id: created.client.id, secret: created.secret };
});

afterAll(async () => {
  await inProcess?.close();
});

/**
 * A client of its own for a test: each client may push 60 requests a (real) minute, which this
 * file's tests together would spend.
 */
async function freshClient(): Promise<void> {
  const created = await clientActions.create(
    { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
    { name: 'Okta', redirect_uris: [REDIRECT], default_template: 'helpdesk', mode: 'test' },
  );
  client = { id: created.client.id, secret: created.secret };
}

/** Each call from an address of its own, so the failures' budgets of one test never reach another. */
function deps() {
  address += 1;
  return {
    db: database.db,
    clock,
    rateLimiters: inProcess.rateLimiters,
    clientAddress: `203.0.113.${address % 250}`,
    jobs: inProcess.jobs,
    issuer: ISSUER,
    pageBase: PAGES,
    defaultLocale: 'en' as const,
    kek: async () => kek,
  };
}

const S256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const VERIFIER = 'v'.repeat(50);

/**
 * The token request the current client makes for `code`, with `fields` changed. Every ID token it
 * is answered is held to the working group's schema of verified_claims (OpenID Connect for
 * Identity Assurance), whatever else its test checks.
 */
const redeem = async (code: unknown, fields: Record<string, unknown> = {}) => {
  const answer = await exchangeCode(deps(), {
    params: {
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: client.id,
      client_secret: client.secret,
      ...fields,
    },
    authorization: null,
  });
  expect(verifiedClaimsProblems(decodeJwt(answer.id_token)), 'verified_claims.json').toEqual([]);
  return answer;
};

/** The test-mode case's document check passed with the names the flows ask for: the case closes. */
function passIdentityCheck(caseId: string) {
  return simulateCase(
    database.db,
    { teamId, livemode: false },
    {
      id: caseId,
      action: 'complete_step',
      method: 'government_id',
      document: { given_name: 'Ada', family_name: 'Lovelace' },
    },
    { clock, jobs: inProcess.jobs },
  );
}

/** The code the pages send back to the relying party for a flow whose case has closed. */
async function codeOf(flow: { caseId: string; binding: string }): Promise<string | null> {
  const closed = await findCaseById(database.db, flow.caseId);
  const bound = await providerFlowOf(database.db, flow.caseId, flow.binding, now);
  if (!closed || !bound) throw new Error('no case');
  return new URL((await relyingPartyReturn(database.db, closed, bound, ISSUER, now)) ?? '').searchParams.get(
    'code',
  );
}

function params(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    response_type: 'code',
    client_id: client.id,
    client_secret: client.secret,
    redirect_uri: REDIRECT,
    code_challenge: S256(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'openid profile identity_assurance',
    state: 'st-1',
    nonce: 'nonce-1',
    login_hint: '00uUSER',
    ui_locales: 'de-AT en',
    claims: JSON.stringify({
      id_token: {
        verified_claims: [
          {
            verification: {
              trust_framework: { value: 'IDV-DELEGATED' },
              assurance_level: { value: 'VERIFIED' },
            },
            claims: {
              given_name: { value: 'Ada', fuzzy: true },
              family_name: { value: 'Lovelace', fuzzy: true },
              email: { value: 'ada@acme.test' },
            },
          },
        ],
      },
    }),
    ...overrides,
  };
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!isOAuthError(error)) throw new Error(`expected an OAuth error, got ${String(error)}`);
  return error;
}

const push = (overrides: Record<string, unknown> = {}, authorization: string | null = null) =>
  pushAuthorizationRequest(deps(), { params: params(overrides), authorization });

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The browser at authorize with a pushed request, as Okta sends it there. */
const authorizeAnswer = (requestUri: string) =>
  authorizeFlow(deps(), { requestUri, clientId: null, clientAddress: '198.51.100.1', userAgent: 'Chrome' });

/** Okta's side and the browser's up to the case: the request pushed, authorize answered. */
async function authorize(overrides: Record<string, unknown> = {}) {
  const pushed = await push(overrides);
  const answer = await authorizeAnswer(pushed.request_uri);
  if (!('redirect' in answer)) throw new Error(`authorize refused: ${answer.refused}`);
  const begin = new URL(answer.redirect);
  const publicId = begin.pathname.split('/')[2] ?? '';
  const [record] = await database.db.select().from(cases).where(eq(cases.publicId, publicId));
  if (!record) throw new Error('no case');
  return {
    requestUri: pushed.request_uri,
    flowId: flowIdOf(pushed.request_uri) ?? '',
    begin,
    binding: begin.searchParams.get('binding') ?? '',
    caseId: record.id,
    publicId,
  };
}

describe('POST /oauth2/par, in-process', () => {
  it('keeps the request as checked for 60 s: redirect, state, nonce, PKCE, the person, the language, the template, the claims', async () => {
    const pushed = await push();
    expect(pushed.expires_in).toBe(60);
    expect(pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[0-9A-Za-z]{32}$/);
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
    expect(flow?.requestExpiresAt.getTime()).toBe(now.getTime() + 60_000);
    expect(flow?.clientId).toBe(client.id);
    expect(flow?.teamId).toBe(teamId);
    expect(flow?.authorizedAt).toBeNull();
    expect(flow?.request).toEqual({
      redirectUri: REDIRECT,
      state: 'st-1',
      nonce: 'nonce-1',
      codeChallenge: S256(VERIFIER),
      scope: 'openid profile identity_assurance',
      loginHint: '00uUSER',
      subjectEmail: 'ada@acme.test',
      locale: 'de',
      template: 'helpdesk',
      verifiedClaims: [
        {
          trustFramework: 'IDV-DELEGATED',
          assuranceLevel: 'VERIFIED',
          claims: {
            given_name: { value: 'Ada', fuzzy: true },
            family_name: { value: 'Lovelace', fuzzy: true },
            email: { value: 'ada@acme.test', fuzzy: false },
          },
        },
      ],
    });
    // Without an email claim the person is the login_hint, when it is an address; no state, no
    // nonce, no language: kept as absent.
    const plain = await push({
      login_hint: 'grace@acme.test',
      state: '',
      nonce: undefined,
      ui_locales: 'xx',
      claims: JSON.stringify({
        id_token: {
          verified_claims: {
            verification: { trust_framework: 'IDV_DELEGATED' },
            claims: { given_name: 'Grace', family_name: { fuzzy: 'Hopper' } },
          },
        },
      }),
    });
    const [second] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, flowIdOf(plain.request_uri) ?? ''));
    expect(second?.request).toMatchObject({
      subjectEmail: 'grace@acme.test',
      state: null,
      nonce: null,
      locale: null,
      verifiedClaims: [
        {
          trustFramework: 'IDV_DELEGATED',
          assuranceLevel: null,
          claims: {
            given_name: { value: 'Grace', fuzzy: false },
            family_name: { value: 'Hopper', fuzzy: true },
          },
        },
      ],
    });
  });

  it('refuses each request that is not whole, with its OAuth error and the reason', async () => {
    const claimsWith = (claims: Record<string, unknown>) =>
      JSON.stringify({
        id_token: { verified_claims: [{ verification: { trust_framework: 'IDV-DELEGATED' }, claims }] },
      });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { request_uri: 'x' },
        'invalid_request',
        'A pushed request carries its parameters itself, not request_uri or request.',
      ],
      [
        { request: 'x' },
        'invalid_request',
        'A pushed request carries its parameters itself, not request_uri or request.',
      ],
      [{ response_type: 'token' }, 'unsupported_response_type', 'response_type must be code'],
      [
        { redirect_uri: `${REDIRECT}/` },
        'invalid_request',
        'The redirect_uri is not registered for this client.',
      ],
      [{ redirect_uri: undefined }, 'invalid_request', 'redirect_uri is required'],
      [{ redirect_uri: 7 }, 'invalid_request', 'redirect_uri must be a string'],
      [{ code_challenge: undefined }, 'invalid_request', 'code_challenge is required'],
      [
        { code_challenge: 'short' },
        'invalid_request',
        'PKCE is required: a code_challenge with code_challenge_method S256.',
      ],
      [
        { code_challenge: 'x'.repeat(129) },
        'invalid_request',
        'code_challenge is longer than 128 characters',
      ],
      [
        { code_challenge_method: 'plain' },
        'invalid_request',
        'PKCE is required: a code_challenge with code_challenge_method S256.',
      ],
      [{ scope: undefined }, 'invalid_request', 'scope is required'],
      [{ scope: 'profile' }, 'invalid_scope', 'scope must include openid'],
      [
        { scope: 'openid idv_flow_a idv_flow_b' },
        'invalid_scope',
        'name one idv_flow_<template> scope at most',
      ],
      [
        { scope: 'openid idv_flow_nope' },
        'invalid_scope',
        'The team has no test template named "nope" (a client names templates of its own mode).',
      ],
      [
        { scope: 'openid idv_flow_no-id' },
        'invalid_request',
        "The template no-id reads no government ID (nor a passkey that leads back to one): an identity provider's flow must, to compare the names it sends with the document's.",
      ],
      [
        { scope: 'openid idv_flow_new-hire' },
        'invalid_request',
        "The template new-hire leaves manager_name and manager_email to each case, which an identity provider's flow cannot give.",
      ],
      [{ login_hint: undefined }, 'invalid_request', 'login_hint is required'],
      [{ login_hint: 'x'.repeat(257) }, 'invalid_request', 'login_hint is longer than 256 characters'],
      [{ state: 's'.repeat(1001) }, 'invalid_request', 'state is longer than 1000 characters'],
      [
        { claims: claimsWith({ family_name: { value: 'Lovelace' } }) },
        'invalid_request',
        "claims.id_token.verified_claims must ask for given_name with the value you hold: it is compared with the document's.",
      ],
      [
        { claims: claimsWith({ given_name: { value: 'Ada' } }) },
        'invalid_request',
        "claims.id_token.verified_claims must ask for family_name with the value you hold: it is compared with the document's.",
      ],
      [
        { login_hint: '00uNOTANADDRESS', claims: claimsWith({ given_name: 'Ada', family_name: 'Lovelace' }) },
        'invalid_request',
        'No e-mail address for the person: send it as claims.id_token.email or claims.userinfo.email ({"value": "…"}, OpenID Connect Core §5.5.1) or in a verified_claims entry\'s claims, or an e-mail address as login_hint.',
      ],
      [{ claims: '{' }, 'invalid_request', 'claims is not JSON'],
      [{ claims: '[]' }, 'invalid_request', 'claims must be a JSON object'],
      [{ claims: '{"id_token": 3}' }, 'invalid_request', 'claims.id_token must be an object'],
      [
        { claims: '{"id_token": {"verified_claims": [3]}}' },
        'invalid_request',
        'claims.id_token.verified_claims[0] must be an object with a verification object',
      ],
      [
        { claims: '{"id_token": {"verified_claims": {"verification": {"trust_framework": "eIDAS"}}}}' },
        'invalid_request',
        'claims.id_token.verified_claims[0].verification.trust_framework must be IDV-DELEGATED or IDV_DELEGATED, not eIDAS',
      ],
      [
        { claims: '{"id_token": {"verified_claims": {"verification": {}}}}' },
        'invalid_request',
        'claims.id_token.verified_claims[0].verification.trust_framework must be IDV-DELEGATED or IDV_DELEGATED',
      ],
      [
        {
          claims:
            '{"id_token": {"verified_claims": {"verification": {"trust_framework": "IDV-DELEGATED"}, "claims": 3}}}',
        },
        'invalid_request',
        'claims.id_token.verified_claims[0].claims must be an object',
      ],
    ];
    for (const [overrides, error, description] of cases) {
      const refused = await refusal(push(overrides));
      expect([refused.error, refused.description, refused.status], JSON.stringify(overrides)).toEqual([
        error,
        description,
        400,
      ]);
    }
    // Without a template named by scope or by the client, there is nothing to run.
    const bare = await clientActions.create(
      { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
      { name: 'Bare', redirect_uris: [REDIRECT], default_template: null, mode: 'test' },
    );
    const untemplated = await refusal(
      push({ client_id: bare.client.id, client_secret: bare.secret, scope: 'openid' }),
    );
    expect(untemplated.description).toBe(
      'No template: name one with the scope idv_flow_<template>, or give the client a default template.',
    );
    const named = await push({
      client_id: bare.client.id,
      client_secret: bare.secret,
      scope: 'openid idv_flow_helpdesk',
    });
    expect(named.expires_in).toBe(60);
  });

  it('authenticates the client one way, by the body or HTTP Basic, and counts only failures', async () => {
    const { client_id: _id, client_secret: _secret, ...anonymous } = params();
    const viaBasic = await pushAuthorizationRequest(deps(), {
      params: anonymous,
      authorization: basic(client.id, client.secret),
    });
    expect(viaBasic.expires_in).toBe(60);
    const both = await refusal(push({}, basic(client.id, client.secret)));
    expect([both.error, both.description]).toEqual([
      'invalid_request',
      'Authenticate the client one way: the Authorization header or the body.',
    ]);
    const none = await refusal(pushAuthorizationRequest(deps(), { params: anonymous, authorization: null }));
    expect([none.error, none.status, none.headers]).toEqual([
      'invalid_client',
      401,
      { 'WWW-Authenticate': 'Basic realm="vouch"' },
    ]);
    expect(none.description).toBe(
      'Client authentication is required (client_secret_basic or client_secret_post).',
    );
    const bearer = await refusal(
      pushAuthorizationRequest(deps(), { params: anonymous, authorization: 'Bearer abc' }),
    );
    expect([bearer.error, bearer.status, bearer.description, bearer.headers]).toEqual([
      'invalid_client',
      401,
      'The Authorization header is not HTTP Basic client credentials.',
      { 'WWW-Authenticate': 'Basic realm="vouch"' },
    ]);
    const mismatched = await refusal(
      pushAuthorizationRequest(deps(), {
        params: { ...anonymous, client_id: 'vouch_client_someoneelse000000000' },
        authorization: basic(client.id, client.secret),
      }),
    );
    expect(mismatched.description).toBe('client_id does not match the authenticated client.');
    const wrongPosted = await refusal(push({ client_secret: 'vouch_secret_wrong' }));
    expect([wrongPosted.error, wrongPosted.status, wrongPosted.headers]).toEqual(['invalid_client', 401, {}]);
    expect(wrongPosted.description).toBe('Client authentication failed.');
    const wrongBasic = await refusal(
      pushAuthorizationRequest(deps(), {
        params: anonymous,
        authorization: basic(client.id, 'vouch_secret_wrong'),
      }),
    );
    expect([wrongBasic.status, wrongBasic.headers]).toEqual([
      401,
      { 'WWW-Authenticate': 'Basic realm="vouch"' },
    ]);
    // Ten failures from one address, then 429 for failures from it; the right secret still passes.
    const fixed = { ...deps(), clientAddress: '192.0.2.44' };
    for (let i = 0; i < 10; i++) {
      const failed = await refusal(
        pushAuthorizationRequest(fixed, {
          params: params({ client_secret: 'vouch_secret_wrong' }),
          authorization: null,
        }),
      );
      expect(failed.status).toBe(401);
    }
    const limited = await refusal(
      pushAuthorizationRequest(fixed, {
        params: params({ client_secret: 'vouch_secret_wrong' }),
        authorization: null,
      }),
    );
    expect([limited.error, limited.status]).toEqual(['invalid_request', 429]);
    expect(limited.headers['Retry-After']).toMatch(/^\d+$/);
    expect(
      (await pushAuthorizationRequest(fixed, { params: params(), authorization: null })).expires_in,
    ).toBe(60);
  });

  it('reads HTTP Basic as RFC 6749 §2.3.1 has it: any case of the scheme, form-encoded parts, and nothing else', async () => {
    const { client_id: _id, client_secret: _secret, ...anonymous } = params();
    const pushWith = (authorization: string, extra: Record<string, unknown> = {}) =>
      pushAuthorizationRequest(deps(), { params: { ...anonymous, ...extra }, authorization });
    const token = Buffer.from(`${client.id}:${client.secret}`).toString('base64');
    expect((await pushWith(`basic ${token}`)).expires_in).toBe(60);
    expect((await pushWith(`  Basic \t ${token}  `)).expires_in).toBe(60);
    // The same client_id in the body as in the header is no conflict.
    expect((await pushWith(`Basic ${token}`, { client_id: client.id })).expires_in).toBe(60);
    const notCredentials = 'The Authorization header is not HTTP Basic client credentials.';
    for (const header of [
      'Basic',
      'Basic ',
      `Basic${token}`,
      `Basic ${Buffer.from(`${client.id}${client.secret}`).toString('base64')}`,
      `Basic ${Buffer.from(`${client.id}:%zz`).toString('base64')}`,
      `Basic ${Buffer.from(`%E0%A4%A:${client.secret}`).toString('base64')}`,
    ]) {
      const refused = await refusal(pushWith(header));
      expect([header, refused.error, refused.description]).toEqual([
        header,
        'invalid_client',
        notCredentials,
      ]);
    }
    // A '+' is a space in form encoding: a secret sent with its '+' unencoded is another secret.
    const plus = await refusal(
      pushWith(`Basic ${Buffer.from(`${client.id}:${client.secret}+`).toString('base64')}`),
    );
    expect(plus.description).toBe('Client authentication failed.');
    const spaced = await refusal(
      pushWith(`Basic ${Buffer.from(`${client.id}:${client.secret}%20`).toString('base64')}`),
    );
    expect(spaced.description).toBe('Client authentication failed.');
    // An empty secret after the colon is a secret, and a wrong one.
    const empty = await refusal(pushWith(`Basic ${Buffer.from(`${client.id}:`).toString('base64')}`));
    expect(empty.description).toBe('Client authentication failed.');
    // An empty client id before the colon is credentials still, naming no client.
    const noId = await refusal(pushWith(`Basic ${Buffer.from(`:${client.secret}`).toString('base64')}`));
    expect([noId.error, noId.status, noId.description]).toEqual([
      'invalid_client',
      401,
      'Client authentication failed.',
    ]);
  });

  it('holds each parameter to its edge: the challenge whole, an empty or null one as none, the longest allowed, the first language it speaks', async () => {
    await freshClient();
    const valid = S256(VERIFIER);
    for (const challenge of [`!${valid}`, `${valid}!`, `${valid.slice(0, 42)}`]) {
      const refused = await refusal(push({ code_challenge: challenge }));
      expect([challenge, refused.description]).toEqual([
        challenge,
        'PKCE is required: a code_challenge with code_challenge_method S256.',
      ]);
    }
    const stored = async (pushed: { request_uri: string }) => {
      const [row] = await database.db
        .select()
        .from(oidcFlows)
        .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
      return row?.request as Record<string, unknown>;
    };
    // An empty state is no state, nor is a null one (a JSON body's); the longest state allowed is
    // kept whole, one more is refused.
    expect((await stored(await push({ state: '' }))).state).toBeNull();
    const nulls = await stored(await push({ state: null, nonce: null }));
    expect([nulls.state, nulls.nonce]).toEqual([null, null]);
    expect((await stored(await push({ state: 's'.repeat(1000) }))).state).toBe('s'.repeat(1000));
    expect((await refusal(push({ state: 's'.repeat(1001) }))).description).toBe(
      'state is longer than 1000 characters',
    );
    // The first language of the list that the pages speak, not merely the first.
    expect((await stored(await push({ ui_locales: 'tlh  ja de' }))).locale).toBe('ja');
    expect((await stored(await push({ ui_locales: 'tlh' }))).locale).toBeNull();
  });

  it('keeps a rotated secret for its grace period only', async () => {
    const rotated = await clientActions.rotateSecret(
      { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
      client.id,
      600,
    );
    const old = client.secret;
    client = { id: client.id, secret: rotated.secret };
    expect((await push({ client_secret: old })).expires_in).toBe(60);
    expect((await push()).expires_in).toBe(60);
    now = new Date(now.getTime() + 601_000);
    expect((await refusal(push({ client_secret: old }))).error).toBe('invalid_client');
    expect((await push()).expires_in).toBe(60);
  });

  it('takes the person’s address from claims.id_token.email, claims.userinfo.email or verified_claims; refuses two that disagree, naming both', async () => {
    await freshClient();
    const names = {
      given_name: { value: 'Ada', fuzzy: true },
      family_name: { value: 'Lovelace', fuzzy: true },
    };
    const verified = (claims: Record<string, unknown> = {}) => ({
      verification: { trust_framework: 'IDV-DELEGATED' },
      claims: { ...names, ...claims },
    });
    const subjectOf = async (claims: Record<string, unknown>, loginHint = '00uUSER') => {
      const pushed = await push({ login_hint: loginHint, claims: JSON.stringify(claims) });
      const [flow] = await database.db
        .select()
        .from(oidcFlows)
        .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
      return (flow?.request as { subjectEmail?: string } | undefined)?.subjectEmail;
    };
    // Each place alone (OpenID Connect Core §5.5.1 asks for a claim with a value in the ID token or
    // the UserInfo answer; Okta puts it among the verified claims), and all three agreeing.
    expect(
      await subjectOf({ id_token: { email: { value: 'id-token@acme.test' }, verified_claims: verified() } }),
    ).toBe('id-token@acme.test');
    expect(
      await subjectOf({
        id_token: { verified_claims: [verified()] },
        userinfo: { email: { value: 'userinfo@acme.test', essential: true } },
      }),
    ).toBe('userinfo@acme.test');
    expect(
      await subjectOf({
        id_token: { verified_claims: [verified({ email: { value: 'verified@acme.test' } })] },
      }),
    ).toBe('verified@acme.test');
    expect(
      await subjectOf({
        id_token: {
          email: { value: 'ada@acme.test' },
          verified_claims: verified({ email: { value: 'Ada@acme.test' } }),
        },
        userinfo: { email: { value: 'ada@acme.test' } },
      }),
    ).toBe('ada@acme.test');
    // None: the login_hint, when it is an address.
    expect(await subjectOf({ id_token: { verified_claims: verified() } }, 'hint@acme.test')).toBe(
      'hint@acme.test',
    );
    const refused = await refusal(
      push({
        claims: JSON.stringify({
          id_token: { email: { value: 'ada@acme.test' }, verified_claims: verified() },
          userinfo: { email: { value: 'eve@acme.test' } },
        }),
      }),
    );
    expect([refused.error, refused.description]).toEqual([
      'invalid_request',
      "claims.id_token.email and claims.userinfo.email give different e-mail addresses: send the person's one address.",
    ]);
    const inVerified = await refusal(
      push({
        claims: JSON.stringify({
          id_token: {
            email: { value: 'ada@acme.test' },
            verified_claims: verified({ email: { value: 'eve@acme.test' } }),
          },
        }),
      }),
    );
    expect(inVerified.description).toBe(
      "claims.id_token.email and claims.id_token.verified_claims[0].claims.email give different e-mail addresses: send the person's one address.",
    );
    // A top-level email is no OAuth parameter: not read, and the refusal for want of an address says so.
    const topLevel = await refusal(
      push({ email: 'ada@acme.test', claims: JSON.stringify({ id_token: { verified_claims: verified() } }) }),
    );
    expect(topLevel.description).toMatch(
      /^No e-mail address for the person: .* A top-level email parameter is not read/,
    );
  });

  it('takes the guide’s example request whole: valid under the working group’s request schema, its names asserted plainly in the ID token', async () => {
    await freshClient();
    const guide = readFileSync('docs/guides/5-identity-providers.md', 'utf8');
    const blocks = [...guide.matchAll(/^( *)```json\n([\s\S]*?)\n\1```$/gm)].map((match) => match[2] ?? '');
    const example = blocks.find((block) => block.includes('"id_token"'));
    const answered = blocks.find((block) => block.includes('"time"'));
    if (!example || !answered)
      throw new Error('the guide shows no claims request, or no ID token’s verified_claims');
    // What the guide says the ID token carries holds to the schema too.
    expect(verifiedClaimsProblems(JSON.parse(answered)), 'verified_claims.json').toEqual([]);
    const claims = JSON.parse(example) as {
      id_token: {
        email: { value: string };
        verified_claims: { claims: Record<string, { value: string; fuzzy?: boolean }> };
      };
    };
    expect(verifiedClaimsRequestProblems(claims), 'verified_claims_request.json').toEqual([]);
    const asked = claims.id_token.verified_claims.claims;
    // The guide shows fuzzy on a name.
    expect(Object.values(asked).some((claim) => claim.fuzzy === true)).toBe(true);
    const flow = await authorize({ claims: example, login_hint: '00uGUIDE' });
    const record = await findCaseById(database.db, flow.caseId);
    expect(record?.subjectEmail).toBe(claims.id_token.email.value);
    const given = asked.given_name?.value ?? '';
    const family = asked.family_name?.value ?? '';
    await simulateCase(
      database.db,
      { teamId, livemode: false },
      {
        id: flow.caseId,
        action: 'complete_step',
        method: 'government_id',
        document: { given_name: given, family_name: family },
      },
      { clock, jobs: inProcess.jobs },
    );
    const answer = await redeem(await codeOf(flow));
    const [entry] = decodeJwt(answer.id_token).verified_claims as Array<{ claims: unknown }>;
    expect(entry?.claims).toEqual({ given_name: given, family_name: family });
    expect(entry?.claims).toEqual(
      (JSON.parse(answered) as { verified_claims: Array<{ claims: unknown }> }).verified_claims[0]?.claims,
    );
  });

  it('lets a client push its 60th request a minute, not its 61st; a budget that cannot be read is no 429', async () => {
    await freshClient();
    for (let i = 0; i < 60; i++) expect((await push()).expires_in).toBe(60);
    const limited = await refusal(push());
    expect([limited.error, limited.status]).toEqual(['invalid_request', 429]);
    expect(limited.description).toMatch(
      /^This client has pushed 60 authorization requests in the last minute; retry in \d+ s\.$/,
    );
    expect(limited.headers['Retry-After']).toMatch(/^\d+$/);
    // The budgets' store failing is the service's fault, answered as such, not the client's excess.
    const unavailable = new AppError('SERVICE_UNAVAILABLE');
    const failingBudgets = {
      ...deps(),
      rateLimiters: {
        ...inProcess.rateLimiters,
        consume: async () => {
          throw unavailable;
        },
      },
    };
    const thrown = await pushAuthorizationRequest(failingBudgets, {
      params: params(),
      authorization: null,
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(thrown).toBe(unavailable);
    // This client's minute is spent; the tests after this one push with another.
    await freshClient();
  });
});

describe('GET /oauth2/authorize, the verdict back, and POST /oauth2/token, in-process', () => {
  it('opens the case for the person, binds the flow, hands a code back to the bound browser, and redeems it for a verifying ID token', async () => {
    const flow = await authorize();
    expect(flow.begin.origin + flow.begin.pathname).toBe(`${PAGES}/v/${flow.publicId}/begin`);
    expect(flow.binding).toMatch(/^[0-9A-Za-z]{32}$/);
    const record = await findCaseById(database.db, flow.caseId);
    expect(record).toMatchObject({
      teamId,
      livemode: false,
      status: 'open',
      subjectEmail: 'ada@acme.test',
      externalRef: '00uUSER',
      locale: 'de',
      // The identity provider gives no notes: the case carries none.
      notes: '',
    });
    expect((record?.expiresAt.getTime() ?? 0) - (record?.createdAt.getTime() ?? 0)).toBe(30 * 60_000);
    expect(record?.steps.find((step) => step.method === 'government_id')?.settings).toMatchObject({
      expected_given_name: 'Ada',
      expected_family_name: 'Lovelace',
      expected_fuzzy: true,
    });
    // Spent: a second authorize with the same request opens nothing.
    const again = await authorizeFlow(deps(), {
      requestUri: flow.requestUri,
      clientId: null,
      clientAddress: null,
      userAgent: null,
    });
    expect(again).toEqual({ refused: 'unknown' });

    // The flow, as the pages see it: bound to the browser holding the binding only.
    const bound = await providerFlowOf(database.db, flow.caseId, flow.binding, now);
    expect(bound).toMatchObject({ application: 'Okta', boundHere: true });
    expect(bound?.startedAt.getTime()).toBe(now.getTime());
    expect((await providerFlowOf(database.db, flow.caseId, 'x'.repeat(32), now))?.boundHere).toBe(false);
    expect((await providerFlowOf(database.db, flow.caseId, null, now))?.boundHere).toBe(false);
    if (!bound || !record) throw new Error('no flow');
    // An open case sends nobody back.
    expect(await relyingPartyReturn(database.db, record, bound, ISSUER, now)).toBeNull();

    await passIdentityCheck(flow.caseId);
    const closed = await findCaseById(database.db, flow.caseId);
    if (!closed) throw new Error('no case');
    expect(closed.status).toBe('closed');
    const unbound = await providerFlowOf(database.db, flow.caseId, null, now);
    if (!unbound) throw new Error('no flow');
    expect(await relyingPartyReturn(database.db, closed, unbound, ISSUER, now)).toBeNull();
    const back = new URL((await relyingPartyReturn(database.db, closed, bound, ISSUER, now)) ?? '');
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(ISSUER);
    const code = back.searchParams.get('code') ?? '';
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A second visit within the code's minute answers the same code.
    const twice = new URL((await relyingPartyReturn(database.db, closed, bound, ISSUER, now)) ?? '');
    expect(twice.searchParams.get('code')).toBe(code);

    // Another client of the same team, authenticating rightly, cannot redeem this client's code.
    const other = await clientActions.create(
      { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
      { name: 'Other IdP', redirect_uris: [REDIRECT], mode: 'test' },
    );
    const token = (fields: Record<string, unknown>) => redeem(code, fields);
    const refusals: Array<[Record<string, unknown>, string, string]> = [
      [{ grant_type: 'password' }, 'unsupported_grant_type', 'grant_type must be authorization_code'],
      [{ code: '' }, 'invalid_request', 'code is required'],
      [{ code: 7 }, 'invalid_request', 'code is required'],
      [{ code_verifier: '' }, 'invalid_request', 'code_verifier is required (PKCE)'],
      [{ code_verifier: 7 }, 'invalid_request', 'code_verifier is required (PKCE)'],
      [
        { client_id: other.client.id, client_secret: other.secret },
        'invalid_grant',
        'The code is unknown, expired, already used, or not this client’s.',
      ],
      [
        { code: 'unknown' },
        'invalid_grant',
        'The code is unknown, expired, already used, or not this client’s.',
      ],
      [
        { redirect_uri: `${REDIRECT}?x` },
        'invalid_grant',
        'redirect_uri is not the one of the authorization request.',
      ],
      [
        { code_verifier: 'w'.repeat(50) },
        'invalid_grant',
        'The code_verifier does not match the code_challenge.',
      ],
    ];
    for (const [fields, error, description] of refusals) {
      const refused = await refusal(token(fields));
      expect([refused.error, refused.description], JSON.stringify(fields)).toEqual([error, description]);
    }
    const answer = await token({});
    expect(answer).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    expect(answer.access_token).toMatch(/^vouch_at_[0-9A-Za-z]{32}$/);
    const keys = createLocalJWKSet({ keys: await publishedKeys(database.db, now, 365) });
    const { payload, protectedHeader } = await jwtVerify(answer.id_token, keys, {
      issuer: ISSUER,
      audience: client.id,
      algorithms: ['RS256'],
      currentDate: now,
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: '00uUSER', nonce: 'nonce-1', vouch_livemode: false });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    expect(payload.iat).toBe(Math.floor(now.getTime() / 1000));
    expect(payload.verified_claims).toEqual([
      {
        verification: {
          trust_framework: 'IDV-DELEGATED',
          assurance_level: 'VERIFIED',
          time: closed.steps.find((step) => step.method === 'government_id')?.verifiedAt?.toISOString(),
        },
        // The names compared, as plain values (the request's fuzzy is no part of the assertion).
        claims: { given_name: 'Ada', family_name: 'Lovelace' },
      },
    ]);
    // Once only.
    expect((await refusal(token({}))).error).toBe('invalid_grant');
    // And the page sends no more code back.
    const spent = await providerFlowOf(database.db, flow.caseId, flow.binding, now);
    if (!spent) throw new Error('no flow');
    expect(await relyingPartyReturn(database.db, closed, spent, ISSUER, now)).toBeNull();
  });

  it('sends a failed, a timed-out and a canceled case back with access_denied saying why; nothing for a redacted one', async () => {
    const answerFor = async (prepare: (caseId: string) => Promise<void>) => {
      const flow = await authorize();
      await prepare(flow.caseId);
      const record = await findCaseById(database.db, flow.caseId);
      const bound = await providerFlowOf(database.db, flow.caseId, flow.binding, now);
      if (!record || !bound) throw new Error('no case');
      const back = await relyingPartyReturn(database.db, record, bound, ISSUER, now);
      return back === null ? null : Object.fromEntries(new URL(back).searchParams);
    };
    const sim = (caseId: string, input: Record<string, unknown>) =>
      simulateCase(
        database.db,
        { teamId, livemode: false },
        { id: caseId, ...input } as Parameters<typeof simulateCase>[2],
        { clock, jobs: inProcess.jobs },
      );
    expect(
      await answerFor((id) =>
        sim(id, {
          action: 'complete_step',
          method: 'government_id',
          document: { given_name: 'Grace', family_name: 'Hopper' },
        }).then(() => undefined),
      ),
    ).toEqual({
      error: 'access_denied',
      error_description: 'The verification failed (name_mismatch).',
      state: 'st-1',
      iss: ISSUER,
    });
    expect(await answerFor((id) => sim(id, { action: 'expire' }).then(() => undefined))).toMatchObject({
      error: 'access_denied',
      error_description: 'The verification was not finished in time.',
    });
    expect(
      await answerFor(async (id) => {
        await database.db.update(cases).set({ status: 'expired', canceledAt: now }).where(eq(cases.id, id));
      }),
    ).toMatchObject({ error: 'access_denied', error_description: 'The verification was canceled.' });
    expect(
      await answerFor(async (id) => {
        await database.db.update(cases).set({ status: 'closed', redactedAt: now }).where(eq(cases.id, id));
      }),
    ).toBeNull();
  });

  it('refuses an unknown, an expired and another client’s request; a case that cannot open goes back with access_denied', async () => {
    const call = (requestUri: string, clientId: string | null = null) =>
      authorizeFlow(deps(), { requestUri, clientId, clientAddress: null, userAgent: null });
    expect(await call('urn:ietf:params:oauth:request_uri:unknown')).toEqual({ refused: 'unknown' });
    expect(await call(`urn:ietf:params:oauth:request_uri:${'a'.repeat(32)}`)).toEqual({ refused: 'unknown' });
    const foreign = await push();
    expect(await call(foreign.request_uri, 'vouch_client_000000000000000000000000')).toEqual({
      refused: 'unknown',
    });
    expect(await call(foreign.request_uri, '\u0000')).toEqual({ refused: 'unknown' });
    // Refused for another client's id, not spent: its own client's authorize opens it.
    expect(await call(foreign.request_uri, client.id)).toMatchObject({ redirect: expect.any(String) });
    const late = await push();
    now = new Date(now.getTime() + 61_000);
    expect(await call(late.request_uri)).toEqual({ refused: 'expired' });
    // The template was deleted between the push and authorize: the case cannot open, and the
    // browser goes back saying so.
    const ctx = teamContext(false);
    const doomed = await templateActions.create(ctx, {
      name: 'doomed',
      verification_methods: { government_id: true },
    });
    const pushed = await push({ scope: 'openid idv_flow_doomed' });
    await templateActions.delete(ctx, doomed.id);
    const answer = await call(pushed.request_uri);
    if (!('redirect' in answer)) throw new Error('refused');
    const back = new URL(answer.redirect);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe(
      'The verification could not start: template: your team has no template named "doomed"',
    );
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(ISSUER);
    // Nothing was opened for it.
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
    expect(flow?.caseId).toBeNull();
  });
});

describe('GET /oauth2/authorize, at its edges', () => {
  const call = (requestUri: string, extra: Partial<ReturnType<typeof deps>> = {}) =>
    authorizeFlow(
      { ...deps(), ...extra },
      { requestUri, clientId: null, clientAddress: '198.51.100.9', userAgent: 'Okta' },
    );

  it('will not redeem a code once its case was redacted, nor spend it', async () => {
    await freshClient();
    const flow = await authorize();
    await passIdentityCheck(flow.caseId);
    const code = await codeOf(flow);
    await database.db.update(cases).set({ redactedAt: now }).where(eq(cases.id, flow.caseId));
    const refused = await refusal(redeem(code));
    expect([refused.error, refused.description]).toEqual([
      'invalid_grant',
      'The verification this code stood for is no longer there to assert.',
    ]);
    const [row] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, flow.flowId));
    expect(row?.codeUsedAt).toBeNull();
  });

  it('will not redeem a code whose case is no longer closed, nor spend it', async () => {
    await freshClient();
    const flow = await authorize();
    await passIdentityCheck(flow.caseId);
    const code = await codeOf(flow);
    // A code is handed out only for a closed case; the token endpoint asserts the verification
    // again, so a case whose row says otherwise by then (its ID step still verified) is refused.
    for (const status of ['open', 'failed', 'expired'] as const) {
      await database.db.update(cases).set({ status }).where(eq(cases.id, flow.caseId));
      const refused = await refusal(redeem(code));
      expect([status, refused.error, refused.description]).toEqual([
        status,
        'invalid_grant',
        'The verification this code stood for is no longer there to assert.',
      ]);
    }
    const [row] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, flow.flowId));
    expect(row?.codeUsedAt).toBeNull();
    // Not spent: closed again, the same code is redeemed.
    await database.db.update(cases).set({ status: 'closed' }).where(eq(cases.id, flow.caseId));
    expect((await redeem(code)).token_type).toBe('Bearer');
  });

  it('opens a live client’s case in live mode, from the live template of its name, and its ID token says live', async () => {
    // Every other flow here runs through a test-mode client: a case opened in test mode whatever
    // the client's mode, or an ID token always saying test, would pass them all.
    const testClient = client;
    const liveCtx = teamContext(true);
    // The live "helpdesk" asks for an e-mail as well as the document, so the case shows which of
    // the two templates of that name it was opened from.
    await templateActions.create(liveCtx, {
      name: 'helpdesk',
      verification_methods: { email: true, government_id: true },
    });
    const created = await clientActions.create(
      { db: database.db, teamId, actor: OPERATOR_ACTOR, clock },
      { name: 'Okta', redirect_uris: [REDIRECT], default_template: 'helpdesk', mode: 'live' },
    );
    client = { id: created.client.id, secret: created.secret };
    try {
      const flow = await authorize();
      const record = await findCaseById(database.db, flow.caseId);
      expect(record).toMatchObject({ teamId, livemode: true, status: 'open', externalRef: '00uUSER' });
      expect(record?.steps.map((step) => step.method)).toEqual(['email', 'government_id', 'selfie']);
      // A live case cannot be simulated: the e-mail is confirmed and the ID provider's verdict
      // arrives as they do for a live case (the provider's result applied to the case).
      await database.db.transaction((tx) => completeSteps(tx, inProcess.jobs, flow.caseId, ['email'], now));
      await applyIdentityResult(
        database.db,
        inProcess.jobs,
        flow.caseId,
        {
          outcome: 'verified',
          name: 'Ada Lovelace',
          names: { given: 'Ada', family: 'Lovelace' },
          reportId: 'vr_live_1',
        },
        now,
      );
      expect((await findCaseById(database.db, flow.caseId))?.status).toBe('closed');
      const answer = await redeem(await codeOf(flow));
      const keys = createLocalJWKSet({ keys: await publishedKeys(database.db, now, 365) });
      const { payload } = await jwtVerify(answer.id_token, keys, {
        issuer: ISSUER,
        audience: client.id,
        currentDate: now,
      });
      expect(payload).toMatchObject({ sub: '00uUSER', nonce: 'nonce-1', vouch_livemode: true });
    } finally {
      client = testClient;
    }
  });

  it('is too late at the request’s 60th second, not a moment before', async () => {
    await freshClient();
    const pushedAt = now.getTime();
    const onTime = await push();
    const late = await push();
    now = new Date(pushedAt + 59_999);
    expect(await call(onTime.request_uri)).toMatchObject({ redirect: expect.any(String) });
    now = new Date(pushedAt + 60_000);
    expect(await call(late.request_uri)).toEqual({ refused: 'expired' });
  });

  it('matches names fuzzily only when both were asked fuzzily; the provider is the case’s actor', async () => {
    await freshClient();
    const claims = (givenFuzzy: boolean, familyFuzzy: boolean) =>
      JSON.stringify({
        id_token: {
          verified_claims: {
            verification: { trust_framework: 'IDV-DELEGATED' },
            claims: {
              given_name: { value: 'Ada', fuzzy: givenFuzzy },
              family_name: { value: 'Lovelace', fuzzy: familyFuzzy },
              email: { value: 'ada@acme.test' },
            },
          },
        },
      });
    const settingsOf = async (givenFuzzy: boolean, familyFuzzy: boolean) => {
      const flow = await authorize({ claims: claims(givenFuzzy, familyFuzzy) });
      const [step] = await database.db.select().from(caseSteps).where(eq(caseSteps.caseId, flow.caseId));
      return { flow, settings: (step?.settings ?? {}) as Record<string, unknown> };
    };
    const both = await settingsOf(true, true);
    expect(both.settings).toMatchObject({
      expected_given_name: 'Ada',
      expected_family_name: 'Lovelace',
      expected_fuzzy: true,
    });
    expect((await settingsOf(true, false)).settings).toMatchObject({ expected_fuzzy: false });
    expect((await settingsOf(false, true)).settings).toMatchObject({ expected_fuzzy: false });
    const [opened] = await database.db.select().from(auditLog).where(eq(auditLog.target, both.flow.caseId));
    expect(opened).toMatchObject({
      actorUserId: null,
      actorEmail: `Okta (identity provider ${client.id})`,
      ipAddress: '198.51.100.1',
      userAgent: 'Chrome',
    });
  });

  it('sends the browser back with temporarily_unavailable while the service cannot open a case, server_error on a fault', async () => {
    await freshClient();
    const failing = (error: Error) => ({
      jobs: {
        ...inProcess.jobs,
        webhookAttempts: async () => {
          throw error;
        },
      },
    });
    // A team endpoint makes the opening queue a delivery, which is where it fails.
    const [endpoint] = await database.db
      .insert(webhookEndpoints)
      .values({
        teamId,
        livemode: false,
        url: 'https://receiver.test/hook',
        secret: 'whsec_test',
        events: ['case.created'],
      })
      .returning({ id: webhookEndpoints.id });
    const answers: Array<Record<string, string>> = [];
    const logged = vi.spyOn(logger, 'error');
    const loggedFor: boolean[] = [];
    for (const error of [
      new AppError('SERVICE_UNAVAILABLE'),
      new Error('a fault'),
      new AppError('INTERNAL_ERROR'),
    ]) {
      logged.mockClear();
      const pushed = await push();
      const answer = await call(pushed.request_uri, failing(error));
      if (!('redirect' in answer)) throw new Error('refused');
      answers.push(Object.fromEntries(new URL(answer.redirect).searchParams));
      // A fault is logged for the operator; the service being unavailable is no fault of its own.
      loggedFor.push(logged.mock.calls.some(([message]) => message === 'authorize failed'));
      const [flow] = await database.db
        .select()
        .from(oidcFlows)
        .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
      expect(flow?.caseId).toBeNull();
    }
    expect(answers).toEqual([
      {
        error: 'temporarily_unavailable',
        error_description: 'The verification could not start; try again.',
        state: 'st-1',
        iss: ISSUER,
      },
      {
        error: 'server_error',
        error_description: 'The verification could not start; try again.',
        state: 'st-1',
        iss: ISSUER,
      },
      {
        error: 'server_error',
        error_description: 'The verification could not start; try again.',
        state: 'st-1',
        iss: ISSUER,
      },
    ]);
    expect(loggedFor).toEqual([false, true, true]);
    logged.mockRestore();
    await database.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint?.id ?? ''));
  });

  it('lets the pages see the flow until its 40th minute after authorize, not a moment after', async () => {
    await freshClient();
    const flow = await authorize();
    const authorizedAt = now.getTime();
    const at = (ms: number) => providerFlowOf(database.db, flow.caseId, flow.binding, new Date(ms));
    expect(await at(authorizedAt + FLOW_RETURN_SECONDS * 1000)).toMatchObject({
      application: 'Okta',
      boundHere: true,
    });
    expect(await at(authorizedAt + FLOW_RETURN_SECONDS * 1000 + 1)).toBeNull();
  });

  it('dates the ID token’s verification by the government ID step, not by another step of the case', async () => {
    await freshClient();
    await templateActions.create(teamContext(false), {
      name: 'mail-then-id',
      verification_methods: { email: true, government_id: true },
    });
    const flow = await authorize({ scope: 'openid idv_flow_mail-then-id' });
    const complete = (method: 'email' | 'government_id') =>
      simulateCase(
        database.db,
        { teamId, livemode: false },
        {
          id: flow.caseId,
          action: 'complete_step',
          method,
          ...(method === 'government_id' ? { document: { given_name: 'Ada', family_name: 'Lovelace' } } : {}),
        },
        { clock, jobs: inProcess.jobs },
      );
    // The e-mail step (listed first) passes a minute before the document.
    await complete('email');
    const mailAt = new Date(now);
    now = new Date(now.getTime() + 60_000);
    await complete('government_id');
    const closed = await findCaseById(database.db, flow.caseId);
    expect(closed?.status).toBe('closed');
    expect(closed?.steps.map((step) => step.method)).toEqual(['email', 'government_id', 'selfie']);
    const answer = await redeem(await codeOf(flow));
    const [claims] = decodeJwt(answer.id_token).verified_claims as Array<{ verification: { time: string } }>;
    expect(claims?.verification.time).toBe(now.toISOString());
    expect(claims?.verification.time).not.toBe(mailAt.toISOString());
  });
});

describe('a returning person, re-verified by passkey through the provider', () => {
  it('closes a {passkey: true} template’s case by the passkey alone: amr hwk and user, the original check’s time and names', async () => {
    await freshClient();
    await templateActions.create(teamContext(false), {
      name: 'returning',
      verification_methods: { passkey: true },
    });
    // The person's first flow: the document checked, then a passkey saved on that case.
    const first = await authorize();
    await passIdentityCheck(first.caseId);
    const checkedAt = new Date(now);
    // Its own token says nothing of a passkey.
    expect(decodeJwt((await redeem(await codeOf(first))).id_token).amr).toBeUndefined();
    const enrolling = await findCaseById(database.db, first.caseId);
    if (!enrolling) throw new Error('no case');
    const { authenticator } = await enrollPasskey(database.db, ceremonyCase(enrolling), clock);

    // A month later, Okta's recovery flow: the template of the passkey alone.
    now = new Date(now.getTime() + 30 * 86_400_000);
    const flow = await authorize({ scope: 'openid idv_flow_returning' });
    const opened = await findCaseById(database.db, flow.caseId);
    if (!opened) throw new Error('no case');
    expect(opened.steps.map((step) => step.method)).toEqual(['passkey']);
    const options = await passkeyChallenge(database.db, opened, TEST_RELYING_PARTY, now);
    if (!options.ok) throw new Error(options.why);
    await expect(
      provePasskeyStep(
        database.db,
        inProcess.jobs,
        opened,
        authenticator.authenticate(options.value.challenge),
        TEST_RELYING_PARTY,
        now,
      ),
    ).resolves.toEqual({ result: 'verified' });

    const token = decodeJwt((await redeem(await codeOf(flow))).id_token);
    expect(token.amr).toEqual(['hwk', 'user']);
    const [claims] = token.verified_claims as Array<{ verification: { time: string }; claims: object }>;
    expect(claims?.verification.time).toBe(checkedAt.toISOString());
    expect(claims?.claims).toEqual({ given_name: 'Ada', family_name: 'Lovelace' });
  });
});

describe('a person with no passkey, through the provider', () => {
  it('goes back to the identity provider with access_denied saying why, and nothing opens', async () => {
    await freshClient();
    await templateActions.create(teamContext(false), {
      name: 'passkey-only',
      verification_methods: { passkey: true },
    });
    const claims = JSON.parse(String(params().claims)) as {
      id_token: { verified_claims: Array<{ claims: Record<string, unknown> }> };
    };
    const [entry] = claims.id_token.verified_claims;
    if (entry) entry.claims.email = { value: 'never-saved@acme.test' };
    const pushed = await push({ scope: 'openid idv_flow_passkey-only', claims: JSON.stringify(claims) });
    const answer = await authorizeAnswer(pushed.request_uri);
    if (!('redirect' in answer)) throw new Error(`authorize refused: ${answer.refused}`);
    const back = new URL(answer.redirect);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toContain('holds no passkey');
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, flowIdOf(pushed.request_uri) ?? ''));
    expect(flow?.caseId).toBeNull();
    const opened = await database.db
      .select()
      .from(cases)
      .where(eq(cases.subjectEmail, 'never-saved@acme.test'));
    expect(opened).toEqual([]);
  });
});

describe('the provider’s small parts', () => {
  it('discovery names its endpoints under the issuer, PAR required, S256 and RS256 only: the whole document', () => {
    // toEqual, not toMatchObject: every member is a promise to the relying party, and a member
    // added or dropped changes what Okta reads.
    expect(openidConfiguration(ISSUER)).toEqual({
      issuer: ISSUER,
      pushed_authorization_request_endpoint: `${ISSUER}/oauth2/par`,
      authorization_endpoint: `${ISSUER}/oauth2/authorize`,
      token_endpoint: `${ISSUER}/oauth2/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      require_pushed_authorization_requests: true,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      id_token_signing_alg_values_supported: ['RS256'],
      trust_frameworks_supported: ['IDV-DELEGATED', 'IDV_DELEGATED'],
      claims_in_verified_claims_supported: ['given_name', 'family_name', 'email'],
      authorization_response_iss_parameter_supported: true,
      response_modes_supported: ['query'],
      subject_types_supported: ['public'],
      scopes_supported: ['openid', 'profile', 'identity_assurance'],
      claims_parameter_supported: true,
      claims_supported: ['sub', 'amr', 'verified_claims', 'given_name', 'family_name', 'email'],
      verified_claims_supported: true,
      ui_locales_supported: ['en', 'de', 'fr', 'es', 'pt-BR', 'it', 'nl', 'pl', 'ja', 'ko', 'zh-CN', 'ar'],
    });
  });

  it('an OAuth error answers {error, error_description}, never cached, with its status and headers', async () => {
    const response = oauthErrorResponse(
      new OAuthError('invalid_client', 'No.', 401, { 'WWW-Authenticate': 'Basic' }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    expect(response.headers.get('www-authenticate')).toBe('Basic');
    expect(await response.json()).toEqual({ error: 'invalid_client', error_description: 'No.' });
    expect(new OAuthError('invalid_request', 'x').status).toBe(400);
    expect(isOAuthError(new Error('x'))).toBe(false);
    expect(isOAuthError(null)).toBe(false);
    // Whatever else was thrown is none either: nothing at all, or a bare string.
    expect([isOAuthError(undefined), isOAuthError('invalid_client: No.')]).toEqual([false, false]);
  });

  it('reads claims as an object too, nothing asked as none, and the first entry holding a value', () => {
    for (const nothing of [undefined, '', {}, { id_token: {} }]) {
      expect(readClaimsRequest(nothing)).toEqual({ verifiedClaims: [], emails: [] });
    }
    const { verifiedClaims: entries } = readClaimsRequest({
      id_token: {
        verified_claims: [
          { verification: { trust_framework: 'IDV-DELEGATED' }, claims: { given_name: null } },
          { verification: { trust_framework: 'IDV-DELEGATED' }, claims: { given_name: { value: 'Ada' } } },
        ],
      },
    });
    expect(requestedClaim(entries, 'given_name')).toEqual({ value: 'Ada', fuzzy: false });
    expect(requestedClaim(entries, 'family_name')).toBeNull();
  });
});

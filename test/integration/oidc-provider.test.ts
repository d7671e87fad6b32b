/**
 * The OpenID provider (issue 30, part 3): discovery, pushed authorization
 * requests as Okta sends them (form and JSON bodies, both trust-framework spellings, the
 * array-shaped verified_claims) and as openid-client pushes them (client_secret_post and
 * client_secret_basic). Each refusal answers OAuth's error shape and says why.
 */

import { createHmac } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, caseSteps, cases, oidcFlows } from '@/db/schema';
import en from '@/server/i18n/messages/en.json' with { type: 'json' };
import ja from '@/server/i18n/messages/ja.json' with { type: 'json' };
import { pseudoText } from '@/server/i18n/pseudo-locale';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { teamEvidenceKey } from '@/server/teams/team-secrets';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { readableText, untranslatedRuns } from '@/test/support/untranslated';
import { verifiedClaimsProblems } from '@/test/support/verified-claims-schema';

let database: TestDatabase;
let app: RunningApp;
let teamId: string;
let clientId: string;
let clientSecret: string;
let strangerTemplate: string;
let testKey: string;
let liveKey: string;
const REDIRECT = 'https://acme.okta.com/idp/identity-verification/callback';

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(database.db, { name: 'Acme', adminEmail: 'owner@acme.test' }, systemClock);
  teamId = created.team.id;
  testKey = created.testKey.token;
  liveKey = created.key.token;
  const api = apiClient(app.baseUrl, created.testKey.token);
  for (const template of [
    { name: 'helpdesk', verification_methods: { email: true, government_id: true } },
    { name: 'no-id', verification_methods: { email: true, sms: true } },
    { name: 'new-hire', verification_methods: { government_id: true, manager: true } },
  ]) {
    expect((await api.post('/v1/templates/', template)).status).toBe(201);
  }
  const other = await createTeam(database.db, { name: 'Other', adminEmail: 'o@other.test' }, systemClock);
  strangerTemplate = 'other-team-only';
  expect(
    (
      await apiClient(app.baseUrl, other.testKey.token).post('/v1/templates/', {
        name: strangerTemplate,
        verification_methods: { government_id: true },
      })
    ).status,
  ).toBe(201);
  const client = await runCli(
    ['oidc-clients', 'create', '--team', teamId, '--name', 'Okta', '--redirect-uri', REDIRECT],
    { DATABASE_URL: database.url },
  );
  clientId = String(client.client_id);
  clientSecret = String(client.client_secret);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** Okta's `claims`, as its guide shows them: an array, values with fuzzy. */
function oktaClaims(framework = 'IDV-DELEGATED', names = { given: 'Ada', family: 'Lovelace' }) {
  return {
    id_token: {
      verified_claims: [
        {
          verification: {
            trust_framework: { value: framework, essential: true },
            assurance_level: { value: 'VERIFIED', essential: true },
          },
          claims: {
            given_name: { value: names.given, fuzzy: true },
            family_name: { value: names.family, fuzzy: true },
            email: { value: 'ada@acme.test', fuzzy: true },
          },
        },
      ],
    },
  };
}

/** An Okta PAR's parameters, with a valid PKCE challenge. */
async function oktaParams(overrides: Record<string, unknown> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  return {
    response_type: 'code',
    client_id: clientId,
    client_secret: clientSecret,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'openid profile identity_assurance idv_flow_helpdesk',
    nonce: 'n-0S6_WzA2Mj',
    state: 'okta-state-123',
    login_hint: '00u1a2b3c4d5e6f7g8h9',
    redirect_uri: REDIRECT,
    claims: oktaClaims(),
    ...overrides,
  };
}

function postForm(params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const body = new URLSearchParams(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
  return fetch(`${app.baseUrl}/oauth2/par`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded;charset=UTF-8', ...headers },
    body,
  });
}

function postJson(params: Record<string, unknown>) {
  return fetch(`${app.baseUrl}/oauth2/par`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
}

/**
 * The browser that brought a request: follows authorize into the case through the one-time link
 * that binds the flow to it, keeping the flow's cookie, as a browser would.
 */
async function enter(url: URL | string) {
  const arrival = await fetch(url, { redirect: 'manual' });
  expect(arrival.status).toBe(303);
  const begin = new URL(arrival.headers.get('location') ?? '');
  expect(begin.pathname).toMatch(/^\/v\/[0-9A-Za-z]{16}\/begin$/);
  expect(begin.searchParams.get('binding')).toMatch(/^[0-9A-Za-z]{32}$/);
  const bound = await fetch(begin, { redirect: 'manual' });
  expect(bound.status).toBe(303);
  const setCookie = bound.headers.get('set-cookie') ?? '';
  const publicId = begin.pathname.split('/')[2] ?? '';
  expect(setCookie).toMatch(
    new RegExp(`^vouch_flow=[0-9A-Za-z]{32}; Max-Age=2400; Path=/v/${publicId}; HttpOnly; SameSite=Lax$`),
  );
  const cookie = setCookie.split(';')[0] ?? '';
  const page = new URL(bound.headers.get('location') ?? '', begin).toString();
  expect(page).toBe(`${app.baseUrl}/v/${publicId}`);
  /** A request from that browser (its cookie sent), redirects not followed. */
  const browser = (target: string, init: RequestInit = {}) =>
    fetch(target, { redirect: 'manual', ...init, headers: { ...(init.headers ?? {}), Cookie: cookie } });
  return { page, publicId, begin: begin.toString(), cookie, browser };
}

async function oauthError(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  return body as { error: string; error_description: string };
}

describe('the /docs guide', () => {
  it('gives Okta’s admin the exact values of this service', async () => {
    const document = (await (await fetch(`${app.baseUrl}/v1/openapi.json`)).json()) as {
      info: { description: string };
    };
    // Table cells padded for reading count as one space.
    const guide = document.info.description.replace(/ +/g, ' ');
    expect(guide).toContain("# Use Vouch as Okta's identity verification vendor");
    for (const value of [
      `| Issuer | \`${app.baseUrl}\` |`,
      `| Pushed authorization request endpoint | \`${app.baseUrl}/oauth2/par\` |`,
      `| Authorization endpoint | \`${app.baseUrl}/oauth2/authorize\` |`,
      `| Token endpoint | \`${app.baseUrl}/oauth2/token\` |`,
      `| JWKS endpoint | \`${app.baseUrl}/.well-known/jwks.json\` |`,
    ]) {
      expect(guide).toContain(value);
    }
    // Each of them is what discovery says.
    const metadata = (await (
      await fetch(`${app.baseUrl}/.well-known/openid-configuration`)
    ).json()) as Record<string, string>;
    expect(metadata.pushed_authorization_request_endpoint).toBe(`${app.baseUrl}/oauth2/par`);
  });
});

describe('discovery', () => {
  it('publishes the provider: issuer, endpoints, PAR required, S256, client authentication, verified claims', async () => {
    const response = await fetch(`${app.baseUrl}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      issuer: app.baseUrl,
      pushed_authorization_request_endpoint: `${app.baseUrl}/oauth2/par`,
      authorization_endpoint: `${app.baseUrl}/oauth2/authorize`,
      token_endpoint: `${app.baseUrl}/oauth2/token`,
      jwks_uri: `${app.baseUrl}/.well-known/jwks.json`,
      require_pushed_authorization_requests: true,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      claims_parameter_supported: true,
      verified_claims_supported: true,
      trust_frameworks_supported: ['IDV-DELEGATED', 'IDV_DELEGATED'],
      claims_in_verified_claims_supported: ['given_name', 'family_name', 'email'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  });
});

describe('POST /oauth2/par', () => {
  it('takes Okta’s request as a form (both spellings of the trust framework) and as JSON: 201 {request_uri, expires_in: 60}', async () => {
    for (const send of [
      async () => postForm(await oktaParams()),
      async () => postForm(await oktaParams({ claims: oktaClaims('IDV_DELEGATED') })),
      async () => postJson(await oktaParams()),
    ]) {
      const response = await send();
      expect(response.status).toBe(201);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = (await response.json()) as { request_uri: string; expires_in: number };
      expect(body).toEqual({
        request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[0-9A-Za-z]{32}$/),
        expires_in: 60,
      });
      const [flow] = await database.db
        .select()
        .from(oidcFlows)
        .where(eq(oidcFlows.id, body.request_uri.split(':').at(-1) ?? ''));
      expect(flow).toMatchObject({ clientId, teamId });
      expect(flow?.request).toMatchObject({
        redirectUri: REDIRECT,
        loginHint: '00u1a2b3c4d5e6f7g8h9',
        subjectEmail: 'ada@acme.test',
        template: 'helpdesk',
      });
      expect((flow?.requestExpiresAt.getTime() ?? 0) - (flow?.createdAt.getTime() ?? 0)).toBe(60_000);
    }
  });

  it('is what openid-client pushes with buildAuthorizationUrlWithPAR, with client_secret_post and client_secret_basic', async () => {
    for (const auth of [oidc.ClientSecretPost(clientSecret), oidc.ClientSecretBasic(clientSecret)]) {
      const config = await oidc.discovery(new URL(app.baseUrl), clientId, undefined, auth, {
        execute: [oidc.allowInsecureRequests],
      });
      const verifier = oidc.randomPKCECodeVerifier();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT,
        scope: 'openid profile identity_assurance idv_flow_helpdesk',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        login_hint: 'ada@acme.test',
        claims: JSON.stringify(oktaClaims()),
      });
      expect(url.origin + url.pathname).toBe(`${app.baseUrl}/oauth2/authorize`);
      expect(url.searchParams.get('client_id')).toBe(clientId);
      expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    }
  });

  it('refuses a client that does not authenticate, naming nothing of it: 401 invalid_client', async () => {
    for (const params of [
      await oktaParams({ client_secret: 'vouch_secret_wrong' }),
      await oktaParams({ client_id: 'vouch_client_unknown000000000000' }),
      await oktaParams({ client_secret: undefined }),
    ]) {
      const response = await postForm(
        Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)),
      );
      expect(response.status).toBe(401);
      expect((await oauthError(response)).error).toBe('invalid_client');
    }
  });

  it('refuses each malformed request with invalid_request (or its own error) saying why', async () => {
    const refusals: Array<[Record<string, unknown>, string, RegExp]> = [
      // Compared exactly: another host, a path suffix, a query, a trailing slash, another case.
      ...[
        'https://evil.example/callback',
        `${REDIRECT}/extra`,
        `${REDIRECT}?next=https://evil.example`,
        `${REDIRECT}/`,
        REDIRECT.replace('callback', 'Callback'),
        REDIRECT.replace('https://acme', 'https://ACME'),
      ].map((redirect_uri): [Record<string, unknown>, string, RegExp] => [
        { redirect_uri },
        'invalid_request',
        /redirect_uri is not registered/,
      ]),
      [{ code_challenge: undefined }, 'invalid_request', /code_challenge is required/],
      [{ code_challenge_method: 'plain' }, 'invalid_request', /PKCE is required/],
      [{ response_type: 'token' }, 'unsupported_response_type', /response_type must be code/],
      [{ scope: 'profile idv_flow_helpdesk' }, 'invalid_scope', /must include openid/],
      [{ scope: 'openid' }, 'invalid_request', /No template: name one with the scope idv_flow_<template>/],
      [{ scope: 'openid idv_flow_no-id' }, 'invalid_request', /reads no government ID/],
      [
        { scope: 'openid idv_flow_new-hire' },
        'invalid_request',
        /leaves manager_name and manager_email to each case/,
      ],
      [
        { scope: `openid idv_flow_${'other-team-only'}` },
        'invalid_scope',
        /no test template named "other-team-only"/,
      ],
      [
        { claims: oktaClaims('eIDAS') },
        'invalid_request',
        /trust_framework must be IDV-DELEGATED or IDV_DELEGATED, not eIDAS/,
      ],
      [
        {
          claims: { id_token: { verified_claims: [{ verification: { trust_framework: 'IDV-DELEGATED' } }] } },
        },
        'invalid_request',
        /must ask for given_name/,
      ],
      [{ claims: 'not json' }, 'invalid_request', /claims is not JSON/],
      [{ login_hint: undefined }, 'invalid_request', /login_hint is required/],
      [{ request_uri: 'urn:x' }, 'invalid_request', /not request_uri/],
    ];
    for (const [overrides, error, description] of refusals) {
      const params = Object.fromEntries(
        Object.entries(await oktaParams(overrides)).filter(([, v]) => v !== undefined),
      );
      const response = await postForm(params);
      expect(response.status, JSON.stringify(overrides)).toBe(400);
      const body = await oauthError(response);
      expect(body.error, JSON.stringify(overrides)).toBe(error);
      expect(body.error_description).toMatch(description);
    }
    // No e-mail claim and a login_hint that is no address: nobody to open the case for.
    const noEmail = await oktaParams();
    const [entry] = noEmail.claims.id_token.verified_claims;
    if (entry) delete (entry.claims as Record<string, unknown>).email;
    const response = await postForm(noEmail);
    expect((await oauthError(response)).error_description).toMatch(/No e-mail address for the person/);
  });

  it('answers a wrong method, a body of another type, and a repeated parameter in OAuth’s shape', async () => {
    const get = await fetch(`${app.baseUrl}/oauth2/par`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await oauthError(get)).error).toBe('invalid_request');
    const text = await fetch(`${app.baseUrl}/oauth2/par`, { method: 'POST', body: 'hello' });
    expect(text.status).toBe(415);
    await oauthError(text);
    const twice = await fetch(`${app.baseUrl}/oauth2/par`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `client_id=${clientId}&client_id=${clientId}`,
    });
    expect((await oauthError(twice)).error_description).toMatch(/client_id is given more than once/);
  });

  it('takes exactly 60 pushed requests a minute from one client, then 429 with Retry-After', async () => {
    // A client of its own: its budget is untouched by the tests before.
    const fresh = await runCli(
      ['oidc-clients', 'create', '--team', teamId, '--name', 'Par budget', '--redirect-uri', REDIRECT],
      { DATABASE_URL: database.url },
    );
    const params = await oktaParams({
      client_id: String(fresh.client_id),
      client_secret: String(fresh.client_secret),
      scope: 'openid profile identity_assurance idv_flow_helpdesk',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 61; i += 1) {
      const response = await postForm(params);
      statuses.push(response.status);
      if (i < 60) await response.text();
      else {
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        expect((await oauthError(response)).error_description).toMatch(
          /pushed 60 authorization requests in the last minute/,
        );
      }
    }
    expect(statuses).toEqual([...Array<number>(60).fill(201), 429]);
  });
});

describe('GET /oauth2/authorize', () => {
  let client: { id: string; secret: string };

  beforeAll(async () => {
    const created = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        teamId,
        '--name',
        'Okta sandbox',
        '--redirect-uri',
        REDIRECT,
        '--template',
        'helpdesk',
      ],
      { DATABASE_URL: database.url },
    );
    client = { id: String(created.client_id), secret: String(created.client_secret) };
  });

  async function pushed(overrides: Record<string, string> = {}) {
    const config = await oidc.discovery(
      new URL(app.baseUrl),
      client.id,
      undefined,
      oidc.ClientSecretPost(client.secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    return oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile identity_assurance',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: 'st-1',
      nonce: oidc.randomNonce(),
      login_hint: '00uOKTAUSER1',
      ui_locales: 'de-AT en',
      claims: JSON.stringify(oktaClaims()),
      ...overrides,
    });
  }

  it('opens a case for the person (the client’s default template, its mode, login_hint as external_ref, 30 minutes) and sends the browser into it', async () => {
    const url = await pushed();
    const { publicId } = await enter(url);
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, url.searchParams.get('request_uri')?.split(':').at(-1) ?? ''));
    expect(flow?.caseId).toEqual(expect.any(String));
    const [opened] = await database.db
      .select()
      .from(cases)
      .where(eq(cases.id, flow?.caseId ?? ''));
    expect(opened).toMatchObject({
      teamId,
      livemode: false,
      status: 'open',
      subjectEmail: 'ada@acme.test',
      externalRef: '00uOKTAUSER1',
      locale: 'de',
      publicId,
    });
    expect((opened?.expiresAt.getTime() ?? 0) - (opened?.createdAt.getTime() ?? 0)).toBe(30 * 60_000);
    const steps = await database.db
      .select()
      .from(caseSteps)
      .where(eq(caseSteps.caseId, opened?.id ?? ''));
    expect(steps.map((s) => s.method).sort()).toEqual(['email', 'government_id', 'selfie']);
    const [audit] = await database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.target, opened?.id ?? ''));
    expect(audit).toMatchObject({
      action: 'case.created',
      actorEmail: `Okta sandbox (identity provider ${client.id})`,
    });

    // A second use of the request_uri opens nothing: a page says the link is spent.
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await again.text()).toContain('This verification link cannot be used');
    // In the reader's language, every word of it (the pseudo-locale shows any left in English).
    const japanese = await fetch(url, { redirect: 'manual', headers: { 'Accept-Language': 'ja,en;q=0.5' } });
    expect(japanese.headers.get('content-language')).toBe('ja');
    expect(await japanese.text()).toContain(ja['signInLink.spent.title']);
    const pseudo = await fetch(`${url}&lang=en-XA`, { redirect: 'manual' });
    const pseudoHtml = await pseudo.text();
    // A page in the pseudo-locale, with its words (an empty page would pass the check below)…
    expect(pseudoHtml).toMatch(/<html lang="en-XA" dir="ltr">/);
    const words = readableText(pseudoHtml);
    expect(words.join(' ')).toContain(pseudoText(en['signInLink.spent.title']));
    // …and none left in English (the service's name is a name, not a word to translate).
    expect(untranslatedRuns(words, ['Vouch'])).toEqual([]);
    const all = await database.db.select().from(cases).where(eq(cases.externalRef, '00uOKTAUSER1'));
    expect(all).toHaveLength(1);
  });

  it('compares the document’s names with those sent: a match verifies the ID, a mismatch fails the case with name_mismatch', async () => {
    const openCase = async (loginHint: string) => {
      const entered = await enter(await pushed({ login_hint: loginHint }));
      const [opened] = await database.db.select().from(cases).where(eq(cases.publicId, entered.publicId));
      return { id: opened?.id ?? '', ...entered };
    };
    const api = apiClient(app.baseUrl, testKey);
    // The names expected sit on the case's ID step, for the check to compare.
    const matching = await openCase('00uMATCH');
    const [step] = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, matching.id), eq(caseSteps.method, 'government_id')));
    expect(step?.settings).toMatchObject({
      expected_given_name: 'Ada',
      expected_family_name: 'Lovelace',
      expected_fuzzy: true,
    });
    // Case, accents and one edit (fuzzy) aside, the document shows the names sent.
    const passed = await api.post<{
      status: string;
      verification_methods: Record<string, { verified: boolean }>;
    }>(`/v1/cases/${matching.id}/simulate/`, {
      action: 'complete_step',
      method: 'government_id',
      document: { given_name: 'ADA', family_name: 'Lovelacé' },
    });
    expect(passed.status, passed.text).toBe(200);
    expect(passed.body.verification_methods.government_id?.verified).toBe(true);
    expect(passed.body.verification_methods.selfie?.verified).toBe(true);

    const mismatching = await openCase('00uMISMATCH');
    const failed = await api.post<{ status: string; failure_reason: string }>(
      `/v1/cases/${mismatching.id}/simulate/`,
      {
        action: 'complete_step',
        method: 'government_id',
        document: { given_name: 'Grace', family_name: 'Hopper' },
      },
    );
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failed', failure_reason: 'name_mismatch' });
    // The relying party is told (the case's page sends the browser back), and so is the subject
    // whose case is not waited for: a plain case failed the same way shows why.
    const back = await mismatching.browser(mismatching.page);
    expect(new URL(back.headers.get('location') ?? '').searchParams.get('error')).toBe('access_denied');
    const plain = await api.post<{ id: string; public_id: string }>('/v1/cases/', {
      subject_email: 'plain@acme.test',
      verification_methods: { government_id: true },
    });
    const failedPlain = await api.post(`/v1/cases/${plain.body.id}/simulate/`, {
      action: 'fail_step',
      method: 'government_id',
      failure_reason: 'name_mismatch',
    });
    expect(failedPlain.status).toBe(200);
    const page = await (await fetch(`${app.baseUrl}/v/${plain.body.public_id}?lang=en`)).text();
    expect(page).toContain(
      'the name on your ID document does not match the name your organisation holds for you',
    );
    // A document for a case nobody expected names of: refused where it means nothing.
    const stray = await api.post<{ detail: string }>(`/v1/cases/${matching.id}/simulate/`, {
      action: 'complete_step',
      method: 'email',
      document: { given_name: 'Ada', family_name: 'Lovelace' },
    });
    expect(stray.status).toBe(422);
    expect(stray.body.detail).toMatch(/document: only complete_step of the government_id/);
  });

  it('refuses an expired request_uri, another client’s, and none, opening nothing', async () => {
    const before = (await database.db.select().from(cases)).length;
    const expired = await pushed({ login_hint: '00uEXPIRED' });
    await database.db
      .update(oidcFlows)
      .set({ requestExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(oidcFlows.id, expired.searchParams.get('request_uri')?.split(':').at(-1) ?? ''));
    const late = await fetch(expired, { redirect: 'manual' });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('has expired');
    const foreign = await pushed({ login_hint: '00uFOREIGN' });
    foreign.searchParams.set('client_id', clientId);
    const wrong = await fetch(foreign, { redirect: 'manual' });
    expect(wrong.status).toBe(400);
    await wrong.text();
    const none = await fetch(`${app.baseUrl}/oauth2/authorize`, { redirect: 'manual' });
    expect(none.status).toBe(400);
    await none.text();
    expect((await database.db.select().from(cases)).length).toBe(before);
  });

  it('sends the browser back with access_denied, its state and the issuer, when the case cannot open', async () => {
    const url = await pushed({ login_hint: '00uNOTEMPLATE' });
    // The template goes between the pushed request and the browser's arrival.
    await database.db.execute(
      sql`update verification_templates set name = 'renamed' where name = 'helpdesk'`,
    );
    const response = await fetch(url, { redirect: 'manual' });
    await database.db.execute(
      sql`update verification_templates set name = 'helpdesk' where name = 'renamed'`,
    );
    expect(response.status).toBe(303);
    const back = new URL(response.headers.get('location') ?? '');
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      error_description: expect.stringMatching(
        /^The verification could not start: template: your team has no template named "helpdesk"/,
      ),
      state: 'st-1',
      iss: app.baseUrl,
    });
  });
});

describe('the whole flow: authorize, the hosted flow, the verdict back, POST /oauth2/token', () => {
  let client: { id: string; secret: string };
  let config: oidc.Configuration;

  beforeAll(async () => {
    const created = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        teamId,
        '--name',
        'Okta flow',
        '--redirect-uri',
        REDIRECT,
        '--template',
        'helpdesk',
      ],
      { DATABASE_URL: database.url },
    );
    client = { id: String(created.client_id), secret: String(created.client_secret) };
    config = await oidc.discovery(
      new URL(app.baseUrl),
      client.id,
      undefined,
      oidc.ClientSecretPost(client.secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
  });

  /** Okta's side up to the browser's arrival in the case: answers what it needs to finish. */
  async function start(loginHint: string, names = { given: 'Ada', family: 'Lovelace' }) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile identity_assurance',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      login_hint: loginHint,
      claims: JSON.stringify(oktaClaims('IDV-DELEGATED', names)),
    });
    const entered = await enter(url);
    const [opened] = await database.db.select().from(cases).where(eq(cases.publicId, entered.publicId));
    return { verifier, state, nonce, ...entered, caseId: opened?.id ?? '' };
  }

  /** Okta's side up to authorize's answer only: the link into the case, not yet followed. */
  async function enterUntilBegin(loginHint: string) {
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile identity_assurance',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      login_hint: loginHint,
      claims: JSON.stringify(oktaClaims()),
    });
    const arrival = await fetch(url, { redirect: 'manual' });
    expect(arrival.status).toBe(303);
    return {
      begin: arrival.headers.get('location') ?? '',
      flowId: url.searchParams.get('request_uri')?.split(':').at(-1) ?? '',
    };
  }

  const simulate = (caseId: string, body: Record<string, unknown>) =>
    apiClient(app.baseUrl, testKey).post(`/v1/cases/${caseId}/simulate/`, body);

  it('hands the verdict back with a code, and the token endpoint answers an RS256 ID token asserting the names sent', async () => {
    const flow = await start('00uWHOLEFLOW');
    // While the case is open its page is the flow itself.
    expect((await flow.browser(flow.page)).status).toBe(200);
    expect((await simulate(flow.caseId, { action: 'complete_step', method: 'email' })).status).toBe(200);
    const passed = await simulate(flow.caseId, {
      action: 'complete_step',
      method: 'government_id',
      document: { given_name: 'Ada', family_name: 'Lovelace' },
    });
    expect(passed.status).toBe(200);
    const back = await flow.browser(flow.page);
    expect(back.status).toBe(303);
    const callback = new URL(back.headers.get('location') ?? '');
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get('state')).toBe(flow.state);
    expect(callback.searchParams.get('iss')).toBe(app.baseUrl);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.access_token).toMatch(/^vouch_at_/);
    expect(tokens.expires_in).toBe(300);
    // The ID token verifies against the published keys, RS256, with its kid.
    const { payload, protectedHeader } = await jwtVerify(
      tokens.id_token ?? '',
      createRemoteJWKSet(new URL(`${app.baseUrl}/.well-known/jwks.json`)),
      { issuer: app.baseUrl, audience: client.id, algorithms: ['RS256'] },
    );
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    // A test-mode client's case: its token says so.
    expect(payload).toMatchObject({ sub: '00uWHOLEFLOW', nonce: flow.nonce, vouch_livemode: false });
    expect(payload.verified_claims).toEqual([
      {
        verification: {
          trust_framework: 'IDV-DELEGATED',
          assurance_level: 'VERIFIED',
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
        // The names as sent, as plain values, and nothing Okta did not send: the e-mail it sent
        // was not asserted.
        claims: { given_name: 'Ada', family_name: 'Lovelace' },
      },
    ]);
    expect(verifiedClaimsProblems(payload), 'verified_claims.json').toEqual([]);

    // The case's evidence record names the identity provider's client and its login_hint.
    const evidence = await apiClient(app.baseUrl, testKey).get<{ payload: string }>(
      `/v1/cases/${flow.caseId}/evidence/`,
    );
    expect(evidence.status).toBe(200);
    const record = JSON.parse(Buffer.from(evidence.body.payload, 'base64url').toString()) as {
      case: { external_ref: string; identity_provider_client: string };
    };
    expect(record.case).toMatchObject({ external_ref: '00uWHOLEFLOW', identity_provider_client: client.id });

    // The code works once: a replay is invalid_grant.
    const replay = await fetch(`${app.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') ?? '',
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT,
        client_id: client.id,
        client_secret: client.secret,
      }),
    });
    expect(replay.status).toBe(400);
    expect((await oauthError(replay)).error).toBe('invalid_grant');
  });

  it('binds the flow to the browser that started it: another can neither take the ID step nor carry the code back', async () => {
    const flow = await start('00uBOUNDBROWSER');
    // The browser that started it sees which application asked, and when.
    const own = await flow.browser(`${flow.page}?lang=en`);
    expect(own.status).toBe(200);
    expect(await own.text()).toMatch(/Okta flow asked for this verification on \w+ \d+, \d{4}/);
    // The attack: someone else holding /v/<id> (another cookie jar) is told to start again from the
    // sign-in, and sees nothing of the case.
    const stranger = await fetch(`${flow.page}?lang=en`, { redirect: 'manual' });
    expect(stranger.status).toBe(403);
    const strangerPage = await stranger.text();
    expect(strangerPage).toContain('Continue in the browser where you started');
    expect(strangerPage).toContain('started signing in with Okta flow');
    expect(strangerPage).not.toContain('ada@acme.test');
    // The one-time link that bound the first browser binds no other.
    const replayedBegin = await fetch(flow.begin, { redirect: 'manual' });
    expect(replayedBegin.status).toBe(403);
    expect(replayedBegin.headers.get('set-cookie')).toBeNull();
    // Nor does a link never followed, once two minutes have passed (one forwarded to someone else).
    const forwarded = await enterUntilBegin('00uFORWARDED');
    await database.db
      .update(oidcFlows)
      .set({ authorizedAt: new Date(Date.now() - 3 * 60_000) })
      .where(eq(oidcFlows.id, forwarded.flowId));
    const stale = await fetch(forwarded.begin, { redirect: 'manual' });
    expect(stale.status).toBe(403);
    expect(stale.headers.get('set-cookie')).toBeNull();
    // Nor can it take the ID step: refused before anything is read, the step untouched.
    const form = new FormData();
    form.append('document', new Blob([new Uint8Array(64)], { type: 'image/png' }), 'document.png');
    form.append('selfie', new Blob([new Uint8Array(64)], { type: 'image/png' }), 'selfie.png');
    const upload = await fetch(`${flow.page}/identity`, { method: 'POST', body: form, redirect: 'manual' });
    expect(upload.status).toBe(403);
    const [idStep] = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, flow.caseId), eq(caseSteps.method, 'government_id')));
    expect(idStep?.state).toBe('pending');

    await simulate(flow.caseId, { action: 'complete_step', method: 'email' });
    await simulate(flow.caseId, { action: 'complete_step', method: 'government_id' });
    // The case closed: the other browser still gets the page, never a code (none is even made).
    const late = await fetch(flow.page, { redirect: 'manual' });
    expect(late.status).toBe(403);
    expect(late.headers.get('location')).toBeNull();
    const [unissued] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.caseId, flow.caseId));
    expect(unissued?.codeHash).toBeNull();
    // The browser that started it carries the code back, and the relying party redeems it.
    const callback = new URL((await flow.browser(flow.page)).headers.get('location') ?? '');
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    expect(tokens.id_token).toEqual(expect.any(String));
  });

  it('refuses a wrong verifier, another redirect URI, a wrong secret and another client, each before the code is spent; an expired code', async () => {
    const flow = await start('00uNEGATIVES');
    await simulate(flow.caseId, { action: 'complete_step', method: 'email' });
    await simulate(flow.caseId, { action: 'complete_step', method: 'government_id' });
    const code = async () =>
      new URL((await flow.browser(flow.page)).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const token = (fields: Record<string, string>) =>
      fetch(`${app.baseUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code_verifier: flow.verifier,
          redirect_uri: REDIRECT,
          client_id: client.id,
          client_secret: client.secret,
          ...fields,
        }),
      });
    const issued = await code();
    const wrongVerifier = await token({ code: issued, code_verifier: oidc.randomPKCECodeVerifier() });
    expect((await oauthError(wrongVerifier)).error_description).toMatch(/code_verifier does not match/);
    // RFC 6749 §4.1.3: the redirect URI must be the authorization request's, exactly.
    for (const redirect of ['https://attacker.example/cb', `${REDIRECT}/`, `${REDIRECT}?x=1`, '']) {
      const wrongRedirect = await token({ code: issued, redirect_uri: redirect });
      expect(wrongRedirect.status, redirect).toBe(400);
      expect(await oauthError(wrongRedirect)).toEqual({
        error: 'invalid_grant',
        error_description: 'redirect_uri is not the one of the authorization request.',
      });
    }
    const wrongSecret = await token({ code: issued, client_secret: 'vouch_secret_nope' });
    expect(wrongSecret.status).toBe(401);
    expect((await oauthError(wrongSecret)).error).toBe('invalid_client');
    const otherClient = await token({ code: issued, client_id: clientId, client_secret: clientSecret });
    expect((await oauthError(otherClient)).error).toBe('invalid_grant');
    const grant = await token({ code: issued, grant_type: 'password' });
    expect((await oauthError(grant)).error).toBe('unsupported_grant_type');
    // None of those spent the code: with everything right it is redeemed, once.
    const redeemed = await token({ code: issued });
    expect(redeemed.status, await redeemed.clone().text()).toBe(200);
    expect(((await redeemed.json()) as { id_token: string }).id_token).toEqual(expect.any(String));
    expect((await oauthError(await token({ code: issued }))).error).toBe('invalid_grant');

    // A code not redeemed within 60 s is worth nothing.
    const slow = await start('00uSLOWCODE');
    await simulate(slow.caseId, { action: 'complete_step', method: 'email' });
    await simulate(slow.caseId, { action: 'complete_step', method: 'government_id' });
    const late = new URL((await slow.browser(slow.page)).headers.get('location') ?? '').searchParams.get(
      'code',
    );
    await database.db
      .update(oidcFlows)
      .set({ codeExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(oidcFlows.caseId, slow.caseId));
    const expired = await token({ code: late ?? '', code_verifier: slow.verifier });
    expect((await oauthError(expired)).error).toBe('invalid_grant');
  });

  it('redacting a case an identity provider opened: its request forgotten, external_ref only as an HMAC in evidence, a code handed out before void', async () => {
    const flow = await start('00uREDACTME');
    await simulate(flow.caseId, { action: 'complete_step', method: 'email' });
    await simulate(flow.caseId, { action: 'complete_step', method: 'government_id' });
    const callback = new URL((await flow.browser(flow.page)).headers.get('location') ?? '');
    const code = callback.searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    const [before] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.caseId, flow.caseId));
    for (const personal of ['Ada', 'Lovelace', 'ada@acme.test', '00uREDACTME']) {
      expect(JSON.stringify(before?.request)).toContain(personal);
    }
    const api = apiClient(app.baseUrl, testKey);
    expect((await api.post(`/v1/cases/${flow.caseId}/redact/`)).status).toBe(200);

    const [after] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.caseId, flow.caseId));
    expect(after?.request).toEqual({});
    for (const personal of ['Ada', 'Lovelace', 'ada@acme.test', '00uREDACTME']) {
      expect(JSON.stringify(after), personal).not.toContain(personal);
    }
    // The evidence record names the identity provider's reference only as an evidence-key HMAC.
    const evidence = await fetch(`${app.baseUrl}/v1/cases/${flow.caseId}/evidence/`, {
      headers: { Authorization: `Bearer ${testKey}` },
    });
    expect(evidence.status).toBe(200);
    const jws = (await evidence.json()) as { payload: string };
    const record = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as {
      case: { external_ref: string | null; identity_provider_client: unknown };
    };
    expect(JSON.stringify(record)).not.toContain('00uREDACTME');
    // HMAC-SHA-256 of the login_hint under the team's evidence key, computed here independently.
    const key = await teamEvidenceKey(database.db, teamId);
    expect(record.case.external_ref).toBe(
      `hmac:${createHmac('sha256', key).update('00uREDACTME').digest('base64url')}`,
    );
    // The code handed out before the redaction is void.
    const exchanged = await fetch(`${app.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT,
        client_id: client.id,
        client_secret: client.secret,
      }),
    });
    expect(await oauthError(exchanged)).toEqual({
      error: 'invalid_grant',
      error_description: 'The code is unknown, expired, already used, or not this client’s.',
    });
  });

  it('sends access_denied back for a name mismatch and for an abandoned flow', async () => {
    const mismatch = await start('00uMISMATCH2');
    await simulate(mismatch.caseId, {
      action: 'complete_step',
      method: 'government_id',
      document: { given_name: 'Grace', family_name: 'Hopper' },
    });
    const denied = new URL((await mismatch.browser(mismatch.page)).headers.get('location') ?? '');
    expect(Object.fromEntries(denied.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The verification failed (name_mismatch).',
      state: mismatch.state,
      iss: app.baseUrl,
    });
    await expect(
      oidc.authorizationCodeGrant(config, denied, {
        pkceCodeVerifier: mismatch.verifier,
        expectedState: mismatch.state,
      }),
    ).rejects.toMatchObject({ error: 'access_denied' });

    const abandoned = await start('00uABANDONED');
    await simulate(abandoned.caseId, { action: 'expire' });
    const timedOut = new URL((await abandoned.browser(abandoned.page)).headers.get('location') ?? '');
    expect(timedOut.searchParams.get('error')).toBe('access_denied');
    expect(timedOut.searchParams.get('error_description')).toBe('The verification was not finished in time.');
  });
});

describe('the endpoints under any input', () => {
  it('answer every malformed request in OAuth’s shape, never a server error', async () => {
    const bodies: Array<[string, string | undefined]> = [
      ['application/x-www-form-urlencoded', 'claims=%7B&client_id=%00&scope=openid'],
      ['application/x-www-form-urlencoded', '%%%'],
      ['application/json', '{"claims": {"id_token": {"verified_claims": [null, 3, "x"]}}}'],
      ['application/json', '[1,2,3]'],
      ['application/json', '{"client_id": {"nested": true}, "client_secret": []}'],
      ['application/json', 'not json'],
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', `code=${'x'.repeat(5000)}&grant_type=authorization_code`],
      ['application/x-www-form-urlencoded', undefined],
    ];
    for (const endpoint of ['/oauth2/par', '/oauth2/token']) {
      for (const [type, body] of bodies) {
        for (const authorization of [
          undefined,
          'Basic %%%',
          'Bearer x',
          `Basic ${Buffer.from('a:b').toString('base64')}`,
        ]) {
          const response = await fetch(`${app.baseUrl}${endpoint}`, {
            method: 'POST',
            headers: { 'Content-Type': type, ...(authorization ? { Authorization: authorization } : {}) },
            body,
          });
          const context = `${endpoint} ${type} ${body?.slice(0, 40)} ${authorization}`;
          expect(response.status, context).toBeGreaterThanOrEqual(400);
          expect(response.status, context).toBeLessThan(500);
          await oauthError(response);
        }
      }
    }
    // A valid client's request with a NUL in a parameter: refused, not stored.
    for (const state of ['a\u0000b']) {
      const response = await postForm(await oktaParams({ state }));
      expect(response.status).toBe(400);
      expect((await oauthError(response)).error_description).toMatch(/NUL/);
    }
    for (const query of [
      '',
      '?request_uri=%00',
      '?request_uri=urn:ietf:params:oauth:request_uri:',
      `?request_uri=${'a'.repeat(3000)}`,
    ]) {
      const response = await fetch(`${app.baseUrl}/oauth2/authorize${query}`, { redirect: 'manual' });
      expect(response.status, query).toBe(400);
      await response.text();
    }
  });

  it('takes exactly 60 token requests a minute from one client, then 429 with Retry-After', async () => {
    const created = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        teamId,
        '--name',
        'Busy',
        '--redirect-uri',
        REDIRECT,
        '--template',
        'helpdesk',
      ],
      { DATABASE_URL: database.url },
    );
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 61; i += 1) {
      const response = await fetch(`${app.baseUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'unknown',
          code_verifier: 'v'.repeat(43),
          redirect_uri: REDIRECT,
          client_id: String(created.client_id),
          client_secret: String(created.client_secret),
        }),
      });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
      else await response.text();
    }
    // Exactly 60 answered (the code is unknown: invalid_grant), the 61st refused.
    expect(statuses).toEqual([...Array<number>(60).fill(400), 429]);
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await oauthError(limited as Response)).error_description).toMatch(
      /asked for 60 tokens in the last minute/,
    );
  });

  it('a live client runs live templates only: a test key can neither change nor delete them, nor shadow one by name', async () => {
    const live = apiClient(app.baseUrl, liveKey);
    const test = apiClient(app.baseUrl, testKey);
    const policy = await live.post<{ id: string }>('/v1/templates/', {
      name: 'live-desk',
      verification_methods: { email: true, government_id: true },
    });
    expect(policy.status, policy.text).toBe(201);
    const client = await runCli(
      ['oidc-clients', 'create', '--team', teamId, '--name', 'Live Okta', '--redirect-uri', REDIRECT].concat([
        '--mode',
        'live',
        '--template',
        'live-desk',
      ]),
      { DATABASE_URL: database.url },
    );
    const credentials = { client_id: String(client.client_id), client_secret: String(client.client_secret) };
    const defaultScope = { ...credentials, scope: 'openid profile identity_assurance' };
    // The attack: a test key deletes the live client's default template, so every live PAR fails.
    expect((await test.delete(`/v1/templates/${policy.body.id}/`)).status).toBe(404);
    expect((await test.patch(`/v1/templates/${policy.body.id}/`, { name: 'gone' })).status).toBe(404);
    expect((await postForm(await oktaParams(defaultScope))).status).toBe(201);
    // A test template of a name a live flow asks for is no template of a live client…
    expect(
      (await test.post('/v1/templates/', { name: 'shadow', verification_methods: { government_id: true } }))
        .status,
    ).toBe(201);
    const shadowed = await postForm(
      await oktaParams({ ...credentials, scope: 'openid profile identity_assurance idv_flow_shadow' }),
    );
    expect(shadowed.status).toBe(400);
    expect(await oauthError(shadowed)).toEqual({
      error: 'invalid_scope',
      error_description:
        'The team has no live template named "shadow" (a client names templates of its own mode).',
    });
    // …and the flow a live PAR opens is a live case from the live template.
    const pushed = (await (await postForm(await oktaParams(defaultScope))).json()) as { request_uri: string };
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, pushed.request_uri.split(':').at(-1) ?? ''));
    expect(flow?.request).toMatchObject({ template: 'live-desk' });
  });

  it('never lets another team’s client redeem a code, nor push for a template that is not its team’s', async () => {
    const other = await createTeam(
      database.db,
      { name: 'Elsewhere', adminEmail: 'e@elsewhere.test' },
      systemClock,
    );
    const otherTemplate = await apiClient(app.baseUrl, other.testKey.token).post('/v1/templates/', {
      name: 'helpdesk',
      verification_methods: { government_id: true },
    });
    expect(otherTemplate.status).toBe(201);
    const theirs = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        other.team.id,
        '--name',
        'Theirs',
        '--redirect-uri',
        REDIRECT,
        '--template',
        'helpdesk',
      ],
      { DATABASE_URL: database.url },
    );
    // Their client pushes: the flow runs their own template and opens their team's case, never ours.
    const pushed = await postForm(
      await oktaParams({ client_id: String(theirs.client_id), client_secret: String(theirs.client_secret) }),
    );
    expect(pushed.status).toBe(201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const [flow] = await database.db
      .select()
      .from(oidcFlows)
      .where(eq(oidcFlows.id, request_uri.split(':').at(-1) ?? ''));
    expect(flow?.teamId).toBe(other.team.id);
    // Our flow's code, redeemed by their client: invalid_grant.
    const ours = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        teamId,
        '--name',
        'Ours',
        '--redirect-uri',
        REDIRECT,
        '--template',
        'helpdesk',
      ],
      { DATABASE_URL: database.url },
    );
    const config = await oidc.discovery(
      new URL(app.baseUrl),
      String(ours.client_id),
      undefined,
      oidc.ClientSecretPost(String(ours.client_secret)),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      login_hint: '00uCROSSTEAM',
      claims: JSON.stringify(oktaClaims()),
    });
    const { page, publicId, browser } = await enter(url);
    const [opened] = await database.db.select().from(cases).where(eq(cases.publicId, publicId));
    expect(opened?.teamId).toBe(teamId);
    await apiClient(app.baseUrl, testKey).post(`/v1/cases/${opened?.id}/simulate/`, {
      action: 'complete_step',
      method: 'email',
    });
    await apiClient(app.baseUrl, testKey).post(`/v1/cases/${opened?.id}/simulate/`, {
      action: 'complete_step',
      method: 'government_id',
    });
    const code = new URL((await browser(page)).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const stolen = await fetch(`${app.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: String(theirs.client_id),
        client_secret: String(theirs.client_secret),
      }),
    });
    expect((await oauthError(stolen)).error).toBe('invalid_grant');
    // Refused for their client, not spent: the same code works for its own.
    const own = await fetch(`${app.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: String(ours.client_id),
        client_secret: String(ours.client_secret),
      }),
    });
    expect(own.status, await own.clone().text()).toBe(200);
  });
});

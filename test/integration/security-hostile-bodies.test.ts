/**
 * The attacker's third pass, findings 7 and 8, replayed against the running service: 30,000 nested
 * brackets overflowed the stack of a recursive check (500, before authentication on /oauth2/*), a
 * lone `\ud800` reached PostgreSQL (22P02, 500), `login_hint` carried ESC, BEL, line breaks and
 * direction overrides into the case's external_ref, and 80 wrong client secrets in a row all got
 * 401. Then every route that reads a body is fuzzed (fast-check): whatever arrives, never a 5xx.
 */
import fc from 'fast-check';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { CLIENT_AUTH_FAILURES, CLIENT_AUTH_FAILURES_PER_ADDRESS } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { consoleClient, runCli, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

const SEED = 20261128;
const REDIRECT = 'https://acme.okta.com/idp/identity-verification/callback';
let database: TestDatabase;
let app: RunningApp;
let liveKey: string;
let caseId: string;
let client: { id: string; secret: string };
let ownerCookie: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    // The tests stand in for callers at many addresses, each named by the (trusted) proxy.
    env: {
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT_READ_PER_MINUTE: '1000000',
      RATE_LIMIT_WRITE_PER_MINUTE: '1000000',
    },
  });
  const created = await createTeam(
    database.db,
    { name: 'Hostile', adminEmail: 'owner@hostile.test', planCode: 'enterprise' },
    systemClock,
  );
  liveKey = created.key.token;
  const res = await api('POST', '/v1/cases/', {
    subject_email: 'seed@hostile.test',
    verification_methods: { email: true },
  });
  caseId = ((await res.json()) as { id: string }).id;
  const template = await fetch(`${app.baseUrl}/v1/templates/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${created.testKey.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'helpdesk', verification_methods: { email: true, government_id: true } }),
  });
  expect(template.status).toBe(201);
  const cli = await runCli(
    [
      'oidc-clients',
      'create',
      '--team',
      created.team.id,
      '--name',
      'Okta',
      '--redirect-uri',
      REDIRECT,
    ].concat(['--template', 'helpdesk']),
    { DATABASE_URL: database.url },
  );
  client = { id: String(cli.client_id), secret: String(cli.client_secret) };
  const owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@hostile.test',
    created.owner.oneTimePassword,
    'hostile-owner-password-1',
  );
  ownerCookie = Object.entries(owner.cookies())
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

function api(method: string, path: string, body?: unknown, raw?: string) {
  return fetch(`${app.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${liveKey}`, 'Content-Type': 'application/json' },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
}

function oauth(path: string, body: string, type: string, headers: Record<string, string> = {}) {
  return fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': type, ...headers },
    body,
  });
}

const deepArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

async function oktaParams(overrides: Record<string, unknown> = {}) {
  return {
    response_type: 'code',
    client_id: client.id,
    client_secret: client.secret,
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    scope: 'openid profile identity_assurance',
    login_hint: '00uHOSTILE',
    redirect_uri: REDIRECT,
    claims: {
      id_token: {
        verified_claims: [
          {
            verification: { trust_framework: { value: 'IDV-DELEGATED' } },
            claims: {
              given_name: { value: 'Ada', fuzzy: true },
              family_name: { value: 'Lovelace', fuzzy: true },
              email: { value: 'ada@acme.test' },
            },
          },
        ],
      },
    },
    ...overrides,
  };
}

describe('hostile JSON (finding 7)', () => {
  it('30,000 nested brackets: 400 on /oauth2/par and /oauth2/token without credentials, and on /v1/cases/ with a key', async () => {
    for (const endpoint of ['/oauth2/par', '/oauth2/token']) {
      const res = await oauth(endpoint, `{"claims": ${deepArrays(30_000)}}`, 'application/json');
      expect(res.status, endpoint).toBe(400);
      expect(await res.json()).toEqual({
        error: 'invalid_request',
        error_description: 'The JSON nests deeper than 32 levels.',
      });
      // Objects nest in 5 bytes a level: 10,000 levels fit the endpoints' 64 KB.
      expect((await oauth(endpoint, deepObject(10_000), 'application/json')).status).toBe(400);
    }
    const cases = await api(
      'POST',
      '/v1/cases/',
      undefined,
      `{"subject_email": "a@hostile.test", "verification_methods": ${deepObject(30_000)}}`,
    );
    expect(cases.status).toBe(400);
    expect(await cases.json()).toMatchObject({
      code: 'INVALID_REQUEST',
      detail: 'The JSON nests deeper than 32 levels.',
    });
    // The console's tRPC the same.
    const console = await fetch(`${app.baseUrl}/api/trpc/console.templates.create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: ownerCookie, Origin: app.baseUrl },
      body: `{"name": "x", "verification_methods": ${deepArrays(30_000)}}`,
    });
    expect(console.status).toBe(400);
    expect(app.logs()).not.toMatch(/Maximum call stack|RangeError/);
  });

  it('a lone surrogate: 400 invalid_request at PAR, 422 naming the field in the API; nothing reaches the database', async () => {
    const par = await oauth(
      '/oauth2/par',
      JSON.stringify(await oktaParams()).replace('"00uHOSTILE"', '"00u\\ud800"'),
      'application/json',
    );
    expect(par.status).toBe(400);
    expect(((await par.json()) as { error_description: string }).error_description).toBe(
      'login_hint: holds an unpaired UTF-16 surrogate (such as \\ud800 alone), which is not text.',
    );
    // Inside the claims a form sends as a JSON string, too.
    const form = new URLSearchParams(
      Object.entries(await oktaParams()).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
    form.set('claims', (form.get('claims') ?? '').replace('"Ada"', '"A\\ud800"'));
    const formPar = await oauth('/oauth2/par', form.toString(), 'application/x-www-form-urlencoded');
    expect(formPar.status).toBe(400);
    expect(((await formPar.json()) as { error_description: string }).error_description).toMatch(
      /^claims: id_token\.verified_claims\.0\.claims\.given_name\.value: holds an unpaired UTF-16 surrogate/,
    );
    const question = await api(
      'POST',
      '/v1/cases/',
      undefined,
      '{"subject_email": "q@hostile.test", "verification_methods": {"custom_question": true}, "custom_question_text": "Badge \\ud800?", "custom_question_answer": "Blue"}',
    );
    expect(question.status).toBe(422);
    expect(await question.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      detail:
        'custom_question_text: holds an unpaired UTF-16 surrogate (such as \\ud800 alone), which is not text.',
    });
    expect(app.logs()).not.toMatch(/22P02|unsupported Unicode escape sequence/);
  });
});

describe('identity-provider inputs (finding 8)', () => {
  it('refuses ESC, BEL, line breaks and direction overrides in login_hint, even with an email claim', async () => {
    for (const hint of [
      '00u\u001b[31mred',
      '00u\u0007',
      '00u\r\nX-Injected: 1',
      'evil\u202Egnp.exe',
      '\u2066admin\u2069',
    ]) {
      const res = await oauth(
        '/oauth2/par',
        JSON.stringify(await oktaParams({ login_hint: hint })),
        'application/json',
      );
      expect(res.status, JSON.stringify(hint)).toBe(400);
      expect(((await res.json()) as { error_description: string }).error_description).toBe(
        'login_hint: control characters (such as NUL), line breaks and direction overrides are not allowed.',
      );
    }
    expect((await oauth('/oauth2/par', JSON.stringify(await oktaParams()), 'application/json')).status).toBe(
      201,
    );
  });

  it('counts failed client authentications per address and per client (429 past either), never refusing the right secret', async () => {
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    const attempt = async (secret: string, address: string) =>
      oauth(
        '/oauth2/par',
        JSON.stringify(await oktaParams({ client_secret: secret })),
        'application/json',
        from(address),
      );
    for (let i = 0; i < CLIENT_AUTH_FAILURES_PER_ADDRESS.points; i++) {
      expect((await attempt('vouch_secret_wrong', '203.0.113.7')).status).toBe(401);
    }
    const limited = await attempt('vouch_secret_wrong', '203.0.113.7');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('invalid_request');
    // Failures from many addresses together reach the client's own budget.
    const spent = CLIENT_AUTH_FAILURES_PER_ADDRESS.points;
    for (let i = 0; i < CLIENT_AUTH_FAILURES.points - spent; i++) {
      expect((await attempt('vouch_secret_wrong', `198.51.100.${i % 200}`)).status).toBeLessThan(500);
    }
    expect((await attempt('vouch_secret_wrong', '192.0.2.99')).status).toBe(429);
    // A stranger who knows the client's id cannot lock its identity provider out: the right
    // secret is never refused, from the guessing address or any other.
    expect((await attempt(client.secret, '203.0.113.7')).status).toBe(201);
    expect((await attempt(client.secret, '192.0.2.99')).status).toBe(201);
  });

  it('a client id, a sign-in e-mail or an authorize parameter holding NUL or a lone surrogate is refused, never a 500', async () => {
    const basic = (id: string) => `Basic ${Buffer.from(`${id}:secret`).toString('base64')}`;
    for (const id of ['%00', '\u0000', 'a\u0000b', '\ud800']) {
      const res = await oauth(
        '/oauth2/token',
        'grant_type=authorization_code&code=x&code_verifier=y',
        'application/x-www-form-urlencoded',
        { Authorization: basic(id) },
      );
      expect(res.status, id).toBe(401);
    }
    const authorize = await fetch(
      `${app.baseUrl}/oauth2/authorize?request_uri=urn:ietf:params:oauth:request_uri:${'a'.repeat(32)}&client_id=%00`,
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(400);
    for (const email of ['\u0000', 'a\u0000@b.test', '\ud800@b.test']) {
      const res = await fetch(`${app.baseUrl}/api/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: app.baseUrl },
        // JSON.stringify writes them as the escapes \u0000 and \ud800: valid JSON, hostile text.
        body: JSON.stringify({ email, password: 'whatever-password' }),
      });
      expect(res.status, email).toBeGreaterThanOrEqual(400);
      expect(res.status, email).toBeLessThan(500);
    }
    expect(app.logs()).not.toMatch(/22021|22P02|22P05/);
  });

  it('takes claims a form sends as pretty-printed JSON (its line breaks are spacing)', async () => {
    const params = await oktaParams();
    const form = new URLSearchParams(
      Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v, null, 2)]),
    );
    expect(form.get('claims')).toContain('\n');
    const res = await oauth('/oauth2/par', form.toString(), 'application/x-www-form-urlencoded');
    expect(res.status, await res.clone().text()).toBe(201);
  });
});

/** Every route that reads a body, with a body drawn from `bodies`: never a 5xx. */
describe('every body-reading route under any body', () => {
  it('never answers a 5xx', async () => {
    const document = (await (await fetch(`${app.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const restRoutes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => ['post', 'patch', 'put'].includes(method))
        .map((method) => ({
          method: method.toUpperCase(),
          path: `/v1${path.replace(/\{[^}]+\}/g, caseId)}`,
        })),
    );
    expect(restRoutes.length).toBeGreaterThan(10);
    const targets: Array<{ method: string; path: string; headers: Record<string, string> }> = [
      ...restRoutes.map((route) => ({ ...route, headers: { Authorization: `Bearer ${liveKey}` } })),
      { method: 'POST', path: '/oauth2/par', headers: {} },
      { method: 'POST', path: '/oauth2/token', headers: {} },
      {
        method: 'POST',
        path: '/api/trpc/console.templates.create',
        headers: { Cookie: ownerCookie, Origin: app.baseUrl },
      },
      {
        method: 'POST',
        path: '/api/trpc/console.cases.create',
        headers: { Cookie: ownerCookie, Origin: app.baseUrl },
      },
      { method: 'POST', path: '/api/auth/sign-in/email', headers: { Origin: app.baseUrl } },
    ];
    const lone = fc.constantFrom('\ud800', '\udfff', 'x\udbff', '\u0000', '\u001b', '\u202e');
    const hostileString = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), lone);
    const value = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' });
    const bodies = fc.oneof(
      fc.nat({ max: 60_000 }).map((depth) => deepArrays(depth)),
      fc.nat({ max: 60_000 }).map((depth) => deepObject(depth)),
      fc
        .dictionary(
          fc.oneof(fc.constantFrom('subject_email', 'name', 'login_hint', 'claims', 'email'), hostileString),
          value,
        )
        .map((body) => JSON.stringify(body)),
      fc
        .tuple(hostileString, hostileString)
        .map(([a, b]) => JSON.stringify({ subject_email: a, notes: b, name: a, email: b })),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        bodies,
        fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
        async (target, body, type) => {
          const res = await fetch(`${app.baseUrl}${target.path}`, {
            method: target.method,
            headers: { 'Content-Type': type, ...target.headers },
            body,
          });
          await res.arrayBuffer();
          return res.status < 500;
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
    expect(app.logs()).not.toMatch(/Maximum call stack|22P02|22P05/);
  }, 240_000);
});

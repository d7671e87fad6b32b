import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import type { ApiResponse } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectErrorShape } from '@/test/support/errors';

/**
 * Property-based: thousands of random and malformed requests against every /v1 route, unknown
 * routes and wrong methods. Whatever arrives, the answer is never a 5xx, and every 4xx is the
 * three-field JSON error. Seeded, so a failure reproduces; fast-check prints the shrunk request.
 */
const SEED = 20261122;

let database: TestDatabase;
let app: RunningApp;
let validKey: string;
let caseId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    // Huge budgets: this file measures robustness, not the limits.
    env: { RATE_LIMIT_READ_PER_MINUTE: '10000000', RATE_LIMIT_WRITE_PER_MINUTE: '10000000' },
  });
  const { key } = await createTeam(
    database.db,
    { name: 'Fuzz', adminEmail: 'admin@fuzz.test', planCode: 'enterprise' },
    systemClock,
  );
  validKey = key.token;
  const res = await fetch(`${app.baseUrl}/v1/cases/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${validKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ subject_email: 'seed@fuzz.test', verification_methods: { email: true } }),
  });
  caseId = ((await res.json()) as { id: string }).id;
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

interface FuzzRequest {
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body: string | undefined;
}

/** The path the request really reaches: `/v1/../x` is `/x`, outside the API. */
const resolvedPath = (req: FuzzRequest) => new URL(`${app.baseUrl}${req.path}`).pathname;

async function send(req: FuzzRequest): Promise<ApiResponse> {
  const url = new URL(`${app.baseUrl}${req.path}`);
  for (const [k, v] of req.query) url.searchParams.append(k, v);
  const withBody = req.body !== undefined && req.method !== 'GET' && req.method !== 'HEAD';
  const res = await fetch(url, {
    method: req.method,
    headers: req.headers,
    body: withBody ? req.body : undefined,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // kept as text: the assertions below report it
  }
  return { status: res.status, headers: res.headers, body, text };
}

function check(req: FuzzRequest, res: ApiResponse): void {
  const context = `${req.method} ${req.path} ${JSON.stringify(req.query)} → ${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBeLessThan(500);
  if (!/^\/v1(\/|$)/.test(resolvedPath(req))) return;
  expect(res.status, context).toBeGreaterThanOrEqual(200);
  if (req.method === 'HEAD' || res.status === 204) return;
  expect(res.headers.get('content-type'), context).toMatch(/^application\/json/);
  if (res.status >= 400) expectErrorShape(res);
  // Refusals speak plain words, never the validator's own.
  if (res.status === 422) {
    expect((res.body as { detail: string }).detail, context).not.toMatch(
      /expected|received|Invalid option|Invalid input|Too (big|small)|Unrecognized key/,
    );
  }
  // A success is a JSON object: not null, not an array, not text that failed to parse.
  else expect(Object.prototype.toString.call(res.body), context).toBe('[object Object]');
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
const VERIFICATION_METHODS = ['email', 'sms', 'government_id', 'selfie', 'custom_question', 'manager'];

/** Printable ASCII without control characters: anything else cannot travel in a header or URL. */
const printable = (max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: max,
  });
const segment = fc.oneof(
  fc.constantFrom(
    'cases',
    'account',
    'usage',
    'ping',
    'webhooks',
    'endpoints',
    'deliveries',
    'v1',
    '',
    '..',
    '%',
    '%zz',
    '%00',
  ),
  fc.uuid(),
  fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,16}$/),
);

const path = () =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        '/v1/cases/',
        '/v1/account/',
        '/v1/account/usage/',
        '/v1/ping',
        '/v1/webhooks/endpoints/',
        '/v1/webhooks/deliveries/',
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `/v1/cases/${caseId}/`,
        `/v1/cases/${caseId}`,
        '/v1',
        '/v1/',
        '/v1/openapi.json',
      ),
    },
    { weight: 2, arbitrary: segment.map((s) => `/v1/cases/${s}/`) },
    { weight: 1, arbitrary: segment.map((s) => `/v1/webhooks/endpoints/${s}/`) },
    {
      weight: 2,
      arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/v1/${s.join('/')}`),
    },
  );

const queryKey = fc.oneof(
  fc.constantFrom(
    'status',
    'subject_email',
    'created_after',
    'created_before',
    'cursor',
    'endpoint_id',
    'event_type',
  ),
  printable(12),
);
const queryValue = fc.oneof(
  fc.constantFrom(
    'open',
    'closed',
    'failed',
    'expired',
    'bogus',
    '',
    '2026-01-01T00:00:00Z',
    '2026-13-45',
    'a@b.test',
  ),
  fc.string({ maxLength: 40 }),
  fc.base64String({ maxLength: 80 }),
  fc.json({ maxDepth: 2 }).map((j) => Buffer.from(j).toString('base64url')),
);

const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(null), fc.string());
/** A valid creation body, then a few of its fields replaced by anything or removed. */
const validCase = fc.record({
  subject_email: fc.emailAddress(),
  verification_methods: fc
    .dictionary(fc.constantFrom('email', 'sms', 'government_id', 'selfie'), fc.boolean(), {
      minKeys: 1,
    })
    .map((m) => ({ ...m, email: true })),
  notes: fc.string({ maxLength: 40 }),
});
const mutations = fc.record(
  {
    subject_email: jsonValue,
    subject_name: fc.oneof(fc.string({ maxLength: 210 }), jsonValue),
    verification_methods: fc.oneof(
      fc.dictionary(
        fc.oneof(fc.constantFrom(...VERIFICATION_METHODS), fc.string({ maxLength: 10 })),
        jsonValue,
        {
          maxKeys: 4,
        },
      ),
      fc.dictionary(fc.constantFrom(...VERIFICATION_METHODS), fc.boolean(), { minKeys: 1 }),
      jsonValue,
    ),
    notes: fc.oneof(fc.string({ minLength: 1990, maxLength: 2010 }), jsonValue),
    custom_question_text: jsonValue,
    custom_question_answer: jsonValue,
    manager_name: jsonValue,
    manager_email: fc.oneof(fc.emailAddress(), jsonValue),
    url: fc.oneof(fc.webUrl(), jsonValue),
    events: fc.oneof(fc.array(fc.string({ maxLength: 20 })), jsonValue),
    is_active: jsonValue,
  },
  { requiredKeys: [] },
);
const caseLikeBody = fc
  .tuple(
    validCase,
    fc.oneof({ weight: 1, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: mutations }),
    fc.subarray(['subject_email', 'verification_methods', 'notes']),
  )
  .map(([base, changes, removed]) => {
    const merged: Record<string, unknown> = { ...base, ...changes };
    for (const key of removed) delete merged[key];
    return JSON.stringify(merged);
  });

const body = fc.oneof(
  { weight: 4, arbitrary: caseLikeBody },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '{',
      '{"a":',
      '[',
      'null',
      'true',
      '1e999',
      '"\\ud800"',
      '{"__proto__":{"x":1}}',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const headers = () =>
  fc
    .record(
      {
        auth: fc.oneof(
          { weight: 5, arbitrary: fc.constant(`Bearer ${validKey}`) },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: printable(60).map((s) => `Bearer ${s}`) },
          { weight: 1, arbitrary: printable(60) },
          { weight: 1, arbitrary: fc.constant(`Bearer ${validKey}x`) },
        ),
        contentType: fc.oneof(
          { weight: 5, arbitrary: fc.constant('application/json') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'text/plain',
              'application/x-www-form-urlencoded',
              'application/json; charset=latin1',
              'multipart/form-data',
            ),
          },
          { weight: 1, arbitrary: printable(30) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
        idempotencyKey: fc.oneof(
          { weight: 3, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: printable(70) },
        ),
        accept: fc.option(fc.constantFrom('text/html', 'application/xml', '*/*'), { nil: undefined }),
      },
      { requiredKeys: ['auth', 'contentType', 'idempotencyKey', 'accept'] },
    )
    .map((h) => {
      const out: Record<string, string> = {};
      if (h.auth !== undefined) out.Authorization = h.auth;
      if (h.contentType !== undefined) out['Content-Type'] = h.contentType;
      if (h.idempotencyKey !== undefined) out['Idempotency-Key'] = h.idempotencyKey;
      if (h.accept !== undefined) out.Accept = h.accept;
      return out;
    });

describe('random and malformed requests', () => {
  it('every route, method, header set, query string and body: never a 5xx, every 4xx a JSON error', async () => {
    const request = fc.record({
      method: fc.constantFrom(...METHODS),
      path: path(),
      query: fc.array(fc.tuple(queryKey, queryValue), { maxLength: 4 }),
      headers: headers(),
      body,
    });
    await fc.assert(
      fc.asyncProperty(request, async (req) => check(req, await send(req))),
      { seed: SEED, numRuns: 1500 },
    );
  }, 240_000);

  it('POST /v1/cases/ with case-shaped bodies of every wrong type: 201 or a clean 4xx', async () => {
    const request = fc.record({
      method: fc.constant('POST'),
      path: fc.constant('/v1/cases/'),
      query: fc.constant([] as Array<[string, string]>),
      headers: fc.constant({ Authorization: `Bearer ${validKey}`, 'Content-Type': 'application/json' }),
      body: caseLikeBody,
    });
    let created = 0;
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const res = await send(req);
        check(req, res);
        if (res.status === 201) created++;
        else expect([400, 422], res.text).toContain(res.status);
      }),
      { seed: SEED + 1, numRuns: 600 },
    );
    // The generator is meant to reach the success path too, not only refusals.
    expect(created).toBeGreaterThan(0);
  }, 240_000);

  it('GET /v1/cases/ with random query strings: 200 or a 422', async () => {
    const request = fc.record({
      method: fc.constant('GET'),
      path: fc.constant('/v1/cases/'),
      query: fc.array(fc.tuple(queryKey, queryValue), { maxLength: 5 }),
      headers: fc.constant({ Authorization: `Bearer ${validKey}` }),
      body: fc.constant(undefined),
    });
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const res = await send(req);
        check(req, res);
        expect([200, 422], res.text).toContain(res.status);
      }),
      { seed: SEED + 2, numRuns: 400 },
    );
  }, 240_000);

  it('a malformed percent-escape is a clean 4xx on the API and on verification links, never a 500', async () => {
    const api = await fetch(`${app.baseUrl}/v1/cases/%zz/`, {
      headers: { Authorization: `Bearer ${validKey}` },
    });
    expect(api.status).toBe(400);
    expect(await api.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    for (const path of ['/v/%zz', '/v/%zz/identity', '/console/cases/%zz', '/docs/%E0%A4%A']) {
      const page = await fetch(`${app.baseUrl}${path}`, {
        method: path.endsWith('identity') ? 'POST' : 'GET',
      });
      expect(page.status, path).toBe(404);
      expect(page.headers.get('request-id'), path).toMatch(/^req_/);
    }
  });
});

import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '@/db/schema';
import { revokeApiKey } from '@/server/auth/api-keys';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

/**
 * Not the default (48 h), to show the setting is what sets expires_at; long enough that no case
 * here runs out while a test works on it (the expiry test moves a deadline instead of waiting).
 */
const CASE_TTL_SECONDS = 7200;

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;
let apiKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      CASE_TTL_SECONDS: String(CASE_TTL_SECONDS),
      // No sweep while the file runs: the expiry test reads a case past its deadline, unswept.
      JOB_TICK_SECONDS: '3600',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const { key } = await createTeam(
    database.db,
    { name: 'Create', adminEmail: 'admin@create.test', planCode: 'enterprise' },
    systemClock,
  );
  api = apiClient(app.baseUrl, key.token);
  apiKey = key.token;
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const valid = { subject_email: 'subject@example.com', verification_methods: { email: true } };

interface CaseBody {
  id: string;
  public_id: string;
  status: string;
  subject_email: string;
  subject_name: string | null;
  external_ref: string | null;
  created_at: string;
  expires_at: string;
  is_expired: boolean;
  verification_url: string;
  verification_methods: Record<string, Record<string, unknown>>;
  notes: string;
  failure_reason: string | null;
  canceled_at: string | null;
  redacted_at: string | null;
}

describe('POST /v1/cases/ success', () => {
  it('creates an open case (201) with every field, Location and expires_at = created_at + CASE_TTL_SECONDS', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', valid);
    expect(res.status).toBe(201);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual(
      [
        'canceled_at',
        'created_at',
        'document_name',
        'expires_at',
        'external_ref',
        'failure_reason',
        'id',
        'is_expired',
        'livemode',
        'locale',
        'name_match',
        'notes',
        'offer_passkey',
        'public_id',
        'redacted_at',
        'status',
        'subject_email',
        'subject_name',
        'verification_methods',
        'verification_url',
      ].sort(),
    );
    expect(c.canceled_at).toBeNull();
    expect(c.redacted_at).toBeNull();
    expect(c.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(c.status).toBe('open');
    expect(c.is_expired).toBe(false);
    expect(c.subject_email).toBe('subject@example.com');
    expect(c.subject_name).toBeNull();
    expect(c.notes).toBe('');
    expect(c.external_ref).toBeNull();
    expect(c.failure_reason).toBeNull();
    expect((c as CaseBody & { livemode: boolean }).livemode).toBe(true);
    expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(c.expires_at) - Date.parse(c.created_at)).toBe(CASE_TTL_SECONDS * 1000);
    // 64 random bits need at least 11 base62 characters.
    expect(c.public_id).toMatch(/^[A-Za-z0-9_-]{11,}$/);
    expect(c.verification_url).toBe(`${app.baseUrl}/v/${c.public_id}`);
    expect(res.headers.get('location')).toBe(`${app.baseUrl}/v1/cases/${c.id}/`);
    expect(c.verification_methods).toEqual({
      email: { requested: true, verified: false },
      sms: { requested: false, verified: false, phone_last4: null },
      government_id: { requested: false, verified: false, name_matched: null },
      selfie: { requested: false, verified: false },
      custom_question: { requested: false, verified: false, question: null },
      manager: { requested: false, verified: false, manager_name: null, manager_email: null },
      passkey: { requested: false, verified: false, passkey_id: null, enrolling_case_id: null },
    });
    expect((c as CaseBody & { offer_passkey: boolean }).offer_passkey).toBe(false);

    const fetched = await api.get<CaseBody>(`/v1/cases/${c.id}/`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(c);
    // Without the trailing slash too (trpc-to-openapi matches both forms).
    expect((await api.get(`/v1/cases/${c.id}`)).body).toEqual(c);
  });

  it('writes the case.created event in the same transaction as the case', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', { ...valid, subject_email: 'evented@example.com' });
    const rows = await database.db
      .select()
      .from(events)
      .where(and(eq(events.caseId, res.body.id), eq(events.type, 'case.created')));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.data).toEqual({
      case_id: res.body.id,
      public_id: res.body.public_id,
      subject_email: 'evented@example.com',
      status: 'open',
      created_at: res.body.created_at,
    });
  });

  it('a refused case leaves no event and no case behind', async () => {
    const before =
      await database.sql`select (select count(*) from cases)::int as c, (select count(*) from events)::int as e`;
    const res = await api.post('/v1/cases/', { ...valid, verification_methods: { email: false } });
    expectError(res, 422, 'VALIDATION_ERROR');
    const after =
      await database.sql`select (select count(*) from cases)::int as c, (select count(*) from events)::int as e`;
    expect(after).toEqual(before);
  });

  it('keeps subject_name and notes (2000 characters is the limit)', async () => {
    const notes = 'n'.repeat(2000);
    const res = await api.post<CaseBody>('/v1/cases/', { ...valid, subject_name: 'Ada Lovelace', notes });
    expect(res.status).toBe(201);
    expect(res.body.subject_name).toBe('Ada Lovelace');
    expect(res.body.notes).toBe(notes);
  });

  it('keeps the locale the subject is addressed in, as the supported locale a BCP 47 tag stands for', async () => {
    const german = await api.post<CaseBody & { locale: string | null }>('/v1/cases/', {
      ...valid,
      locale: 'de-AT',
    });
    expect(german.status).toBe(201);
    expect(german.body.locale).toBe('de');
    const read = await api.get<{ locale: string | null }>(`/v1/cases/${german.body.id}/`);
    expect(read.body.locale).toBe('de');
    const brazil = await api.post<{ locale: string | null }>('/v1/cases/', { ...valid, locale: 'pt' });
    expect(brazil.body.locale).toBe('pt-BR');
    const none = await api.post<{ locale: string | null }>('/v1/cases/', valid);
    expect(none.body.locale).toBeNull();
    for (const locale of ['sv', 'klingon!', 42]) {
      const refused = await api.post<{ detail: string }>('/v1/cases/', { ...valid, locale });
      expectError(refused, 422, 'VALIDATION_ERROR');
      expect(refused.body.detail).toMatch(/locale/);
      if (typeof locale === 'string')
        expect(refused.body.detail).toContain('en, de, fr, es, pt-BR, it, nl, pl, ja, ko, zh-CN, ar');
    }
  });

  it('accepts subject_name null', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', { ...valid, subject_name: null });
    expect(res.status).toBe(201);
    expect(res.body.subject_name).toBeNull();
  });

  it('government_id adds selfie', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', {
      ...valid,
      verification_methods: { government_id: true },
    });
    expect(res.status).toBe(201);
    // No document read yet: nothing compared.
    expect(res.body.verification_methods.government_id).toEqual({
      requested: true,
      verified: false,
      name_matched: null,
    });
    expect(res.body.verification_methods.selfie).toEqual({ requested: true, verified: false });
    expect(res.body.verification_methods.email?.requested).toBe(false);
  });

  it('a method set to false is not requested', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', {
      ...valid,
      verification_methods: { email: true, sms: false },
    });
    expect(res.status).toBe(201);
    expect(res.body.verification_methods.sms?.requested).toBe(false);
  });

  it('custom_question keeps the question and never returns the answer', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', {
      ...valid,
      verification_methods: { custom_question: true },
      custom_question_text: 'Name of your first manager?',
      custom_question_answer: 'Zebediah-Secret',
    });
    expect(res.status).toBe(201);
    expect(res.body.verification_methods.custom_question).toEqual({
      requested: true,
      verified: false,
      question: 'Name of your first manager?',
    });
    expect(res.text).not.toContain('Zebediah-Secret');
    const fetched = await api.get(`/v1/cases/${res.body.id}/`);
    expect(fetched.text).not.toContain('Zebediah-Secret');
    expect(fetched.text).not.toContain('answer');
  });

  it('manager keeps manager_name and manager_email', async () => {
    const res = await api.post<CaseBody>('/v1/cases/', {
      ...valid,
      verification_methods: { manager: true, sms: true },
      manager_name: 'Grace Hopper',
      manager_email: 'grace@example.com',
    });
    expect(res.status).toBe(201);
    expect(res.body.verification_methods.manager).toEqual({
      requested: true,
      verified: false,
      manager_name: 'Grace Hopper',
      manager_email: 'grace@example.com',
    });
    expect(res.body.verification_methods.sms).toEqual({
      requested: true,
      verified: false,
      phone_last4: null,
    });
  });
});

describe('POST /v1/cases/ validation (422 VALIDATION_ERROR)', () => {
  const cq = { custom_question_text: 'Q?', custom_question_answer: 'A' };
  const mgr = { manager_name: 'M', manager_email: 'm@example.com' };
  const cases: Array<[string, unknown, string]> = [
    ['missing subject_email', { verification_methods: { email: true } }, 'subject_email'],
    ['subject_email not an e-mail', { ...valid, subject_email: 'not-an-email' }, 'subject_email'],
    ['subject_email a number', { ...valid, subject_email: 42 }, 'subject_email'],
    ['subject_email empty', { ...valid, subject_email: '' }, 'subject_email'],
    [
      'subject_email over 254 characters',
      { ...valid, subject_email: `${'a'.repeat(250)}@example.com` },
      'subject_email',
    ],
    ['missing verification_methods', { subject_email: 'a@example.com' }, 'verification_methods'],
    ['verification_methods empty', { ...valid, verification_methods: {} }, 'verification_methods'],
    [
      'every method false',
      { ...valid, verification_methods: { email: false, sms: false } },
      'verification_methods',
    ],
    [
      'unknown method key',
      { ...valid, verification_methods: { email: true, fingerprint: true } },
      'verification_methods',
    ],
    [
      'method value the string "true"',
      { ...valid, verification_methods: { email: 'true' } },
      'verification_methods',
    ],
    ['method value 1', { ...valid, verification_methods: { email: 1 } }, 'verification_methods'],
    ['method value null', { ...valid, verification_methods: { email: null } }, 'verification_methods'],
    ['verification_methods an array', { ...valid, verification_methods: ['email'] }, 'verification_methods'],
    ['verification_methods a string', { ...valid, verification_methods: 'email' }, 'verification_methods'],
    ['notes over 2000 characters', { ...valid, notes: 'n'.repeat(2001) }, 'notes'],
    ['notes a number', { ...valid, notes: 5 }, 'notes'],
    ['subject_name empty', { ...valid, subject_name: '' }, 'subject_name'],
    ['subject_name over 200 characters', { ...valid, subject_name: 'x'.repeat(201) }, 'subject_name'],
    ['subject_name a number', { ...valid, subject_name: 7 }, 'subject_name'],
    [
      'custom_question without custom_question_text',
      { ...valid, verification_methods: { custom_question: true }, custom_question_answer: 'A' },
      'custom_question_text',
    ],
    [
      'custom_question without custom_question_answer',
      { ...valid, verification_methods: { custom_question: true }, custom_question_text: 'Q?' },
      'custom_question_answer',
    ],
    [
      'custom_question_text empty',
      { ...valid, verification_methods: { custom_question: true }, ...cq, custom_question_text: '   ' },
      'custom_question_text',
    ],
    ['custom_question fields without the method', { ...valid, ...cq }, 'custom_question_text'],
    [
      'manager without manager_email',
      { ...valid, verification_methods: { manager: true }, manager_name: 'M' },
      'manager_email',
    ],
    [
      'manager without manager_name',
      { ...valid, verification_methods: { manager: true }, manager_email: 'm@example.com' },
      'manager_name',
    ],
    [
      'manager_email not an e-mail',
      { ...valid, verification_methods: { manager: true }, ...mgr, manager_email: 'nope' },
      'manager_email',
    ],
    ['manager fields without the method', { ...valid, ...mgr }, 'manager_name'],
    ['unknown top-level field', { ...valid, priority: 'high' }, 'priority'],
    ['a JSON array body', [valid], 'subject_email'],
    ['a JSON string body', 'hello', ''],
    ['an empty body', undefined, 'subject_email'],
  ];

  it.each(cases)('%s', async (_name, body, field) => {
    const res =
      body === undefined
        ? await api.request('POST', '/v1/cases/', {
            rawBody: '',
            headers: { 'Content-Type': 'application/json' },
          })
        : await api.post('/v1/cases/', body);
    expectError(res, 422, 'VALIDATION_ERROR');
    expect((res.body as { detail: string }).detail).toContain(field);
  });
});

describe('status codes and error bodies', () => {
  it('400 INVALID_REQUEST for malformed JSON', async () => {
    const res = await api.request('POST', '/v1/cases/', {
      rawBody: '{"subject_email": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it.each([
    ['text/plain', JSON.stringify(valid)],
    ['application/x-www-form-urlencoded', 'subject_email=a%40b.test'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('400 INVALID_REQUEST for content type %s', async (type, rawBody) => {
    const res = await api.request('POST', '/v1/cases/', { rawBody, headers: { 'Content-Type': type } });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it('400 INVALID_REQUEST for a JSON body without any content type', async () => {
    const res = await api.request('POST', '/v1/cases/', { rawBody: JSON.stringify(valid) });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it('accepts application/json with a charset', async () => {
    const res = await api.request('POST', '/v1/cases/', {
      rawBody: JSON.stringify(valid),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it.each([
    ['no Authorization header', undefined, 'A valid API key is required'],
    [
      'an unknown key',
      'Bearer vouch_live_0000000000000000000000000000000000000000',
      'invalid or has been revoked',
    ],
    ['a key without the live prefix', 'Bearer sk_test_abc', 'invalid or has been revoked'],
    ['Basic authentication', 'Basic dXNlcjpwYXNz', 'A valid API key is required'],
    ['an empty bearer', 'Bearer ', 'A valid API key is required'],
  ])('401 UNAUTHORIZED with WWW-Authenticate for %s', async (_name, authorization, detail) => {
    const anonymous = apiClient(app.baseUrl);
    const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
    for (const res of [
      await anonymous.get('/v1/cases/', headers),
      await anonymous.request('POST', '/v1/cases/', { body: valid, headers }),
      await anonymous.get('/v1/account/', headers),
      await anonymous.get('/v1/account/usage/', headers),
      await anonymous.get('/v1/cases/00000000-0000-4000-8000-000000000000/', headers),
    ]) {
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((res.body as { detail: string }).detail).toContain(detail);
    }
  });

  it('401 for a key that authenticates a malformed body before validating it', async () => {
    const res = await apiClient(app.baseUrl).post('/v1/cases/', { nonsense: true });
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('401 for a revoked key on its next request', async () => {
    const { team, key } = await createTeam(
      database.db,
      { name: 'Revoked', adminEmail: 'admin@revoked.test' },
      systemClock,
    );
    const client = apiClient(app.baseUrl, key.token);
    expect((await client.get('/v1/account/')).status).toBe(200);
    expect(await revokeApiKey(database.db, { keyId: key.id, teamId: team.id }, systemClock)).not.toBeNull();
    const res = await client.get('/v1/account/');
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('404 NOT_FOUND for an unknown or malformed case id', async () => {
    expectError(await api.get('/v1/cases/00000000-0000-4000-8000-000000000000/'), 404, 'NOT_FOUND');
    expectError(await api.get('/v1/cases/not-a-uuid/'), 404, 'NOT_FOUND');
    expectError(await api.get(`/v1/cases/${'9'.repeat(300)}/`), 404, 'NOT_FOUND');
  });

  it('404 for a case asked for by its public_id says that the API takes the id', async () => {
    const created = await api.post<{ id: string; public_id: string }>('/v1/cases/', {
      subject_email: 'public-id@example.test',
      verification_methods: { email: true },
    });
    expect(created.status).toBe(201);
    const res = await api.get(`/v1/cases/${created.body.public_id}/`);
    expectError(res, 404, 'NOT_FOUND');
    expect((res.body as { detail: string }).detail).toBe(
      'No case with this id. This looks like a public_id (the id in the subject’s verification link); the API names a case by its id, a UUID.',
    );
    // Any other unknown id gets the plain answer.
    const unknown = await api.get('/v1/cases/00000000-0000-4000-8000-000000000000/');
    expectError(unknown, 404, 'NOT_FOUND');
    expect((unknown.body as { detail: string }).detail).toBe('No case with this id.');
  });

  it('explains a missing field and a misspelt method over HTTP', async () => {
    const missing = await api.post('/v1/cases/', { verification_methods: { email: true } });
    expectError(missing, 422, 'VALIDATION_ERROR');
    expect((missing.body as { detail: string }).detail).toBe('subject_email: required');
    const misspelt = await api.post('/v1/cases/', {
      subject_email: 'a@example.test',
      verification_methods: { emial: true, sms: true },
    });
    expectError(misspelt, 422, 'VALIDATION_ERROR');
    expect((misspelt.body as { detail: string }).detail).toBe(
      'verification_methods: unknown method "emial" (did you mean "email"?); the methods are email, sms, government_id, selfie, custom_question, manager, passkey',
    );
    const guessed = await api.post('/v1/cases/', {
      subject_email: 'a@example.test',
      subject_phone: '+14155550100',
      verification_methods: { sms: true },
    });
    expectError(guessed, 422, 'VALIDATION_ERROR');
    expect((guessed.body as { detail: string }).detail).toBe(
      'unknown field "subject_phone": the subject types their phone number on the verification page, so none is sent here; request "sms": true in verification_methods',
    );
    const listed = await api.post('/v1/cases/', [{ subject_email: 'a@example.test' }]);
    expectError(listed, 422, 'VALIDATION_ERROR');
    expect((listed.body as { detail: string }).detail).toBe(
      'The request body must be a JSON object, such as {"subject_email": "jane@acme.example"}, not a list.',
    );
    const wrongType = await api.post('/v1/cases/', { ...valid, verification_methods: ['email'] });
    expectError(wrongType, 422, 'VALIDATION_ERROR');
    expect((wrongType.body as { detail: string }).detail).toBe(
      'verification_methods: must be an object naming each method to request, such as {"email": true, "sms": true}',
    );
  });

  it.each([
    ['DELETE', '/v1/cases/', 'POST, GET'],
    ['PUT', '/v1/cases/', 'POST, GET'],
    ['PATCH', '/v1/cases/', 'POST, GET'],
    ['OPTIONS', '/v1/cases/', 'POST, GET'],
    ['POST', '/v1/cases/00000000-0000-4000-8000-000000000000/', 'GET'],
    ['DELETE', '/v1/cases/00000000-0000-4000-8000-000000000000/', 'GET'],
    ['POST', '/v1/account/', 'GET'],
    ['DELETE', '/v1/account/usage/', 'GET'],
    ['POST', '/v1/ping', 'GET'],
  ])('405 METHOD_NOT_ALLOWED with Allow for %s %s', async (method, path, allow) => {
    const res = await api.request(method, path, method === 'POST' ? { body: {} } : {});
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('HEAD answers a 4xx, never a 2xx or an HTML page', async () => {
    for (const [path, status, allow] of [
      ['/v1/cases/', 405, 'POST, GET'],
      ['/v1/ping', 405, 'GET'],
      ['/v1/nowhere/', 404, null],
      ['/v1', 404, null],
    ] as const) {
      const res = await fetch(`${app.baseUrl}${path}`, { method: 'HEAD' });
      expect(res.status, path).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('allow')).toBe(allow);
    }
  });

  it.each([
    ['GET', '/v1'],
    ['GET', '/v1/'],
    ['POST', '/v1'],
    ['OPTIONS', '/v1'],
    ['GET', '/v1/nowhere'],
    ['GET', '/v1/cases/a/b/c/'],
    ['OPTIONS', '/v1/nowhere/'],
    ['DELETE', '/v1/nowhere/'],
    ['GET', '/v1/cases/%00/'],
    ['GET', '/v1/webhooks/nowhere/'],
  ])('%s %s answers a clean JSON 404', async (method, path) => {
    const res = await api.request(method, path);
    expectError(res, 404, 'NOT_FOUND');
  });

  it('413 for a body over 1 MB', async () => {
    const res = await api.post('/v1/cases/', { ...valid, notes: 'x'.repeat(1_100_000) });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('/v1/ping needs no key', async () => {
    const res = await apiClient(app.baseUrl).get<{ status: string }>('/v1/ping');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
  });

  it('answers with a reason phrase on the status line (HTTP/1.1 201 Created, not "201 ")', async () => {
    const created = await fetch(`${app.baseUrl}/v1/cases/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(valid),
    });
    expect([created.status, created.statusText]).toEqual([201, 'Created']);
    const missing = await fetch(`${app.baseUrl}/v1/nowhere/`);
    expect([missing.status, missing.statusText]).toEqual([404, 'Not Found']);
    const page = await fetch(`${app.baseUrl}/console/sign-in`);
    expect([page.status, page.statusText]).toEqual([200, 'OK']);
  });
});

describe('expiry', () => {
  it('a case past expires_at reads as expired at once, and the status filters follow', async () => {
    const created = await api.post<CaseBody>('/v1/cases/', {
      ...valid,
      subject_email: 'expiring@example.com',
    });
    expect(created.status).toBe(201);
    const filter = (status: string) =>
      api.get<{ results: CaseBody[] }>(`/v1/cases/?subject_email=expiring%40example.com&status=${status}`);
    expect((await filter('open')).body.results.map((c) => c.id)).toEqual([created.body.id]);
    expect((await filter('expired')).body.results).toEqual([]);

    // Its deadline passes (moved, rather than waited for); no sweep has marked it.
    await database.sql`update cases set expires_at = now() - interval '1 second' where id = ${created.body.id}`;
    const [row] = await database.sql<
      { status: string }[]
    >`select status from cases where id = ${created.body.id}`;
    expect(row?.status).toBe('open');

    const fetched = await api.get<CaseBody>(`/v1/cases/${created.body.id}/`);
    expect(fetched.body.status).toBe('expired');
    expect(fetched.body.is_expired).toBe(true);
    expect((await filter('open')).body.results).toEqual([]);
    const expired = (await filter('expired')).body.results;
    expect(expired.map((c) => c.id)).toEqual([created.body.id]);
    expect(expired[0]?.is_expired).toBe(true);
    expect((await filter('closed')).body.results).toEqual([]);
  });
});

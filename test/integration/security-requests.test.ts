/**
 * Issue 11, finding 7 and the request-id decision: security headers on every surface (HSTS when
 * served over https), a Request-Id on every response and its log line, 405 for methods the
 * service does not speak, 422 for control characters in any input, and an e-mail link that
 * opening alone does not verify.
 */
import { type IncomingHttpHeaders, request } from 'node:http';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devMailbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { consoleClient } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectServerErrors } from '@/test/support/openapi-conformance';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

let database: TestDatabase;
let app: RunningApp;
let apiKey: string;
let ownerPassword: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url, env: { LOG_LEVEL: 'debug' } });
  const { key, owner } = await createTeam(
    database.db,
    { name: 'Acme', adminEmail: 'owner@acme.test' },
    systemClock,
  );
  apiKey = key.token;
  ownerPassword = owner.oneTimePassword ?? '';
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function newCase(methods: Record<string, boolean>) {
  const created = await apiClient(app.baseUrl, apiKey).post<{ id: string; public_id: string }>('/v1/cases/', {
    subject_email: 'jane@acme.test',
    verification_methods: methods,
  });
  expect(created.status).toBe(201);
  return created.body;
}

describe('security headers and request ids', () => {
  it('every surface answers with them', async () => {
    const { public_id } = await newCase({ email: true });
    const console = await fetch(`${app.baseUrl}/console/sign-in`);
    const asset = (await console.text()).match(/src="(\/_next\/static\/[^"]+\.js)"/)?.[1];
    expect(asset).toBeDefined();
    const paths = [
      '/',
      '/console',
      '/console/sign-in',
      '/docs',
      '/v1/ping',
      '/v1/openapi.json',
      '/v1/cases/',
      '/api/trpc/console.session.me',
      `/v/${public_id}`,
      '/v/unknown-link',
      '/no-such-page',
      '/api/auth/sign-in/email',
      '/integrations/stripe',
      asset ?? '',
    ];
    const ids = new Set<string>();
    for (const path of paths) {
      const res = await fetch(`${app.baseUrl}${path}`, { redirect: 'manual' });
      const h = res.headers;
      expect(h.get('x-content-type-options'), path).toBe('nosniff');
      expect(h.get('referrer-policy'), path).toBe('no-referrer');
      expect(h.get('x-frame-options'), path).toBe('DENY');
      expect(h.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(h.get('strict-transport-security'), path).toBeNull();
      const id = h.get('request-id') ?? '';
      expect(id, path).toMatch(/^req_[A-Za-z0-9_-]{24}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(paths.length);
  });

  it('a route’s own header wins over the defaults: the subject’s page keeps its stricter policy', async () => {
    const { public_id } = await newCase({ email: true });
    const res = await fetch(`${app.baseUrl}/v/${public_id}`);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toMatch(/style-src 'sha256-/);
    expect(res.headers.get('permissions-policy')).toContain('geolocation=()');
  });

  it('pages get a fresh script nonce that Next puts on every script', async () => {
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${app.baseUrl}/console/sign-in`);
      const policy = res.headers.get('content-security-policy') ?? '';
      const nonce = policy.match(/'nonce-([^']+)'/)?.[1];
      expect(nonce).toBeDefined();
      const scriptSrc = policy.split(';').find((d) => d.trim().startsWith('script-src')) ?? '';
      expect(scriptSrc).toContain(`'nonce-${nonce}'`);
      expect(scriptSrc).not.toContain('unsafe-inline');
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts) expect(script).toContain(`nonce="${nonce}"`);
      nonces.push(nonce ?? '');
    }
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it('the log line of a request carries its id', async () => {
    const res = await fetch(`${app.baseUrl}/v1/ping`);
    const id = res.headers.get('request-id');
    const lineOf = () =>
      app
        .logs()
        .split('\n')
        .find((l) => l.includes(`"request_id":"${id}"`));
    await expect.poll(lineOf).toBeDefined();
    const line = lineOf();
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      message: 'request',
      method: 'GET',
      path: '/v1/ping',
      status: 200,
    });
  });

  it('an https deployment sends HSTS', async () => {
    const httpsApp = await startApp({
      databaseUrl: database.url,
      env: { BASE_URL: 'https://vouch.example' },
    });
    try {
      for (const path of ['/v1/ping', '/console/sign-in']) {
        const res = await fetch(`${httpsApp.baseUrl}${path}`);
        expect(res.headers.get('strict-transport-security'), path).toBe(
          'max-age=63072000; includeSubDomains',
        );
      }
    } finally {
      await httpsApp.stop();
    }
  });
});

describe('methods', () => {
  it('TRACE and other unknown methods get 405 with Allow, and nothing is logged as an error', async () => {
    const answered: string[] = [];
    for (const [method, path] of [
      ['TRACE', '/v1/ping'],
      ['TRACE', '/console'],
      ['PROPFIND', '/v1/cases/'],
      ['LINK', '/'],
    ] as const) {
      const res = await rawRequest(method, `${app.baseUrl}${path}`);
      expect(res.status, `${method} ${path}`).toBe(405);
      answered.push(res.headers['request-id'] as string);
      expect(res.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      expect(res.headers['request-id']).toMatch(/^req_/);
      if (path.startsWith('/v1')) expect(JSON.parse(res.body)).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    }
    // Once each refusal's own log line is written, nothing else was.
    await expect.poll(() => answered.every((id) => app.logs().includes(`"request_id":"${id}"`))).toBe(true);
    expect(app.logs()).not.toMatch(/"level":"error"/);
  });
});

describe('control characters', () => {
  it('NUL and other control characters in any input are a 422, never a 500', async () => {
    const api = apiClient(app.baseUrl, apiKey);
    for (const body of [
      { subject_email: 'ja\u0000ne@acme.test', verification_methods: { email: true } },
      { subject_email: 'jane@acme.test', verification_methods: { email: true }, notes: 'bell\u0007' },
      { subject_email: 'jane@acme.test', verification_methods: { email: true }, subject_name: 'Ja\u001bne' },
    ]) {
      const res = await api.post<{ code: string; detail: string }>('/v1/cases/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.detail).toMatch(/control characters/);
    }
    const query = await api.get<{ code: string }>('/v1/cases/?subject_email=%00');
    expect(query.status).toBe(422);
    // In a path it names no resource at all.
    const path = await api.get<{ code: string }>('/v1/cases/%00/');
    expect(path.status).toBe(404);
    expect(path.body.code).toBe('NOT_FOUND');

    // Line breaks and tabs are text, not control codes.
    const notes = await api.post('/v1/cases/', {
      subject_email: 'jane@acme.test',
      verification_methods: { email: true },
      notes: 'line one\nline two\ttabbed\r\n',
    });
    expect(notes.status).toBe(201);

    const owner = consoleClient(app.baseUrl);
    expect((await owner.signIn('owner@acme.test', ownerPassword)).status).toBe(200);
    await owner.mutate('console.session.changePassword', {
      current_password: ownerPassword,
      new_password: 'acme-owner-password-1',
    });
    const consoleCall = await owner.mutate('console.keys.create', { name: 'key\u0000name' });
    expect(consoleCall.status).toBe(422);
    expect(consoleCall.error?.data?.appCode).toBe('VALIDATION_ERROR');

    expect(app.logs()).not.toMatch(/"level":"error"/);
    expect(app.logs()).not.toMatch(/params:/);
  });
});

describe('failed statements', () => {
  it("a failed statement's parameters reach no log line, whether better-auth or a page ran it", async () => {
    // The failing statements it provokes answer 500.
    expectServerErrors();
    // A trigger refuses two writes that carry a person's data: a console session whose user agent
    // says `person-7f3a`, and the phone number 7911 123456 saved on an SMS step.
    await database.db.execute(sql`
      create function refuse_marked() returns trigger language plpgsql
      as $$ begin raise exception 'refused by the test'; end $$`);
    await database.db.execute(sql`
      create trigger refuse_marked_session before insert on auth_sessions for each row
      when (new.user_agent like '%person-7f3a%') execute function refuse_marked()`);
    await database.db.execute(sql`
      create trigger refuse_marked_phone before update on case_steps for each row
      when (new.settings::text like '%7911123456%') execute function refuse_marked()`);
    const refusals = () =>
      app
        .logs()
        .split('\n')
        .filter((line) => line.includes('refused by the test'));

    const { owner } = await createTeam(
      database.db,
      { name: 'Zulu', adminEmail: 'owner@zulu.test' },
      systemClock,
    );
    const signIn = await fetch(`${app.baseUrl}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: app.baseUrl,
        'User-Agent': 'Browser/1.0 person-7f3a',
      },
      body: JSON.stringify({ email: 'owner@zulu.test', password: owner.oneTimePassword }),
    });
    expect(signIn.ok).toBe(false);

    const { public_id } = await newCase({ sms: true });
    const page = await openSubjectPage(`${app.baseUrl}/v/${public_id}`);
    const sent = await postSubjectForm(`${app.baseUrl}/v/${public_id}/sms`, page, {
      action: 'send',
      phone: '+44 7911 123456',
    });
    expect(sent.status, sent.headers.get('location') ?? '').toBe(500);

    // Both failures were logged (by better-auth and by Next.js), and neither line holds the values.
    await expect.poll(() => refusals().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    // Each line is the logger's, and names the request it is about.
    const requestIds = [signIn.headers.get('request-id'), sent.headers.get('request-id')];
    const lines = refusals().map((line) => JSON.parse(line) as { level: string; request_id?: string });
    expect(lines.every((line) => line.level === 'error')).toBe(true);
    expect(new Set(lines.map((line) => line.request_id))).toEqual(new Set(requestIds));
    const logs = app.logs();
    expect(logs).not.toMatch(/person-7f3a/);
    expect(logs).not.toMatch(/7911 ?123456/);
    expect(logs).not.toMatch(/params: (?!\[not logged\])/);
  });
});

describe('the e-mailed link', () => {
  it('opening it verifies nothing; the confirm button does, with its CSRF token', async () => {
    const created = await newCase({ email: true });
    const mail = await waitForMail('jane@acme.test', created.public_id);
    const link = mail.match(/https?:\/\/\S+\/email\/\S+/)?.[0] ?? '';
    expect(link).not.toBe('');

    // A mail scanner opens it (twice).
    for (let i = 0; i < 2; i++) {
      const opened = await fetch(link, { redirect: 'manual' });
      expect(opened.status).toBe(200);
      expect(await opened.text()).toContain('Confirm my e-mail address');
    }
    const api = apiClient(app.baseUrl, apiKey);
    const unverified = await api.get<{
      status: string;
      verification_methods: { email: { verified: boolean } };
    }>(`/v1/cases/${created.id}/`);
    expect(unverified.body.verification_methods.email.verified).toBe(false);

    // A POST without the page's token is refused.
    const forged = await fetch(link, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
      body: '',
    });
    expect(forged.headers.get('location')).toContain('n=form-expired');
    expect((await api.get<{ status: string }>(`/v1/cases/${created.id}/`)).body.status).toBe('open');

    // The subject presses the button.
    const confirmed = await postSubjectForm(link, await openSubjectPage(link), {});
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toContain('n=email-verified');
    expect((await api.get<{ status: string }>(`/v1/cases/${created.id}/`)).body.status).toBe('closed');
  });
});

/** fetch refuses TRACE and friends; node's own client sends any method. */
function rawRequest(
  method: string,
  url: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitForMail(to: string, mentioning: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const rows = await database.db.select().from(devMailbox).where(eq(devMailbox.to, to));
    const mail = rows.find((row) => row.text.includes(mentioning));
    if (mail) return mail.text;
    if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

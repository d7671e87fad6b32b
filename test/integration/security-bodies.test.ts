/**
 * Issue 11, findings 2 and 3: request bodies are counted as they stream and refused at their
 * limit (chunked or declared), the identity upload is judged before its body is read, and
 * clients that send slowly get 408 without taking the API's slots.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import {
  peakResidentMb,
  postChunked,
  postDeclared,
  resetPeakResident,
  residentMb,
} from '@/test/support/abuse';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

const MB = 1_000_000;
const ATTEMPT = 300 * MB;

let database: TestDatabase;
let app: RunningApp;
let apiKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      // Few slots, so that slow clients would visibly take them all if they could.
      MAX_CONCURRENT_REQUESTS: '16',
      // Live ID checks through Stripe, so that its webhook reads bodies; the cases below are test
      // cases, whose ID checks are the simulated upload.
      IDENTITY_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_bodies',
      STRIPE_WEBHOOK_SECRET: 'whsec_bodies',
      STRIPE_API_BASE: 'http://127.0.0.1:9',
    },
  });
  const { testKey } = await createTeam(
    database.db,
    { name: 'Acme', adminEmail: 'owner@acme.test' },
    systemClock,
  );
  apiKey = testKey.token;
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function openCase(methods: Record<string, boolean>, extra: Record<string, unknown> = {}) {
  const created = await apiClient(app.baseUrl, apiKey).post<{ public_id: string; verification_url: string }>(
    '/v1/cases/',
    { subject_email: 'jane@acme.test', verification_methods: methods, ...extra },
  );
  expect(created.status).toBe(201);
  return created.body;
}

/** The subject's page as a browser gets it: its CSRF cookie and the forms' actions. */
async function subjectPage(publicId: string) {
  const res = await fetch(`${app.baseUrl}/v/${publicId}`);
  const html = await res.text();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const uploadAction = html.match(/action="([^"]*\/identity\?csrf=[^"]+)"/)?.[1]?.replaceAll('&amp;', '&');
  return { cookie, uploadAction };
}

interface Surface {
  name: string;
  path: string;
  headers: Record<string, string>;
  refused: number;
}

/** The surfaces that read a body, with what a browser or client would send them. */
function surfaces(publicId: string): Surface[] {
  return [
    {
      name: 'REST API',
      path: '/v1/cases/',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      refused: 413,
    },
    {
      name: 'console tRPC',
      path: '/api/trpc/console.session.changePassword',
      headers: { 'Content-Type': 'application/json', Origin: app.baseUrl },
      refused: 413,
    },
    {
      name: 'sign-in',
      path: '/api/auth/sign-in/email',
      headers: { 'Content-Type': 'application/json', Origin: app.baseUrl },
      refused: 413,
    },
    {
      name: 'Stripe webhook',
      path: '/integrations/stripe',
      headers: { 'Content-Type': 'application/json', 'Stripe-Signature': 't=1,v1=0' },
      refused: 413,
    },
    {
      name: 'verification form',
      path: `/v/${publicId}/question`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
      refused: 413,
    },
  ];
}

describe('request bodies', () => {
  it('a 300 MB chunked body is cut off at the limit on every surface, and memory stays flat', async () => {
    const { public_id } = await openCase(
      { custom_question: true },
      { custom_question_text: 'Colour?', custom_question_answer: 'Blue' },
    );
    for (const surface of surfaces(public_id)) {
      resetPeakResident(app);
      const before = residentMb(app);
      const answer = await postChunked(`${app.baseUrl}${surface.path}`, {
        totalBytes: ATTEMPT,
        headers: surface.headers,
      });
      expect(answer.status, surface.name).toBe(surface.refused);
      // Answered long before the client got near 300 MB: the server stopped reading at the limit.
      expect(answer.sentBytes, surface.name).toBeLessThan(50 * MB);
      expect(answer.headers['request-id'], surface.name).toMatch(/^req_/);
      if (surface.path.startsWith('/v/')) expect(answer.body, surface.name).toContain('too much to send');
      else expect(answer.body, surface.name).toContain('PAYLOAD_TOO_LARGE');
      // Not even for a moment did the process hold the body.
      expect(peakResidentMb(app) - before, surface.name).toBeLessThan(50);
    }
    // Nothing was created from any of it.
    const list = await apiClient(app.baseUrl, apiKey).get<{ results: unknown[] }>('/v1/cases/');
    expect(list.status, list.text).toBe(200);
    expect(list.body.results).toHaveLength(1);
  });

  it('a JSON body that starts with a byte-order mark is read as JSON, as fetch reads it', async () => {
    const res = await fetch(`${app.baseUrl}/v1/cases/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: `\uFEFF${JSON.stringify({ subject_email: 'bom@bodies.test', verification_methods: { email: true } })}`,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { subject_email: string }).subject_email).toBe('bom@bodies.test');
  });

  it('a declared length over the limit is refused before a byte of the body is sent', async () => {
    const { public_id } = await openCase({ email: true });
    for (const surface of surfaces(public_id)) {
      const answer = await postDeclared(`${app.baseUrl}${surface.path}`, {
        contentLength: ATTEMPT,
        headers: surface.headers,
      });
      expect(answer.status, surface.name).toBe(413);
    }
    // The upload's own limit is 25 MB.
    const upload = await postDeclared(`${app.baseUrl}/v/${public_id}/identity`, {
      contentLength: 26 * MB,
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
    });
    expect(upload.status).toBe(413);
  });

  it('the identity upload checks CSRF before reading, then cuts a picture off at 10 MB as it streams', async () => {
    const { public_id } = await openCase({ government_id: true });
    resetPeakResident(app);
    const before = residentMb(app);

    // No token: refused at once, nothing read.
    const forged = await postChunked(`${app.baseUrl}/v/${public_id}/identity`, {
      totalBytes: ATTEMPT,
      headers: { 'Content-Type': 'multipart/form-data; boundary=x', 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(forged.status).toBe(303);
    expect(forged.headers.location).toContain('n=form-expired');
    // Refused on its headers: what was sent is what was in flight when the answer came.
    expect(forged.sentBytes).toBeLessThan(5 * MB);

    // With the page's token and cookie, the form is parsed as it streams: one 300 MB "picture"
    // is refused once it passes the 10 MB a picture may have.
    const { cookie, uploadAction } = await subjectPage(public_id);
    expect(uploadAction).toBeDefined();
    const oversized = await postChunked(`${app.baseUrl}${uploadAction}`, {
      totalBytes: ATTEMPT,
      preamble:
        '--x\r\nContent-Disposition: form-data; name="document"; filename="id.jpg"\r\n' +
        'Content-Type: image/jpeg\r\n\r\n',
      headers: {
        'Content-Type': 'multipart/form-data; boundary=x',
        'Sec-Fetch-Site': 'same-origin',
        Cookie: cookie,
      },
    });
    expect(oversized.status).toBe(303);
    expect(oversized.headers.location).toContain('n=identity-too-large');
    expect(oversized.sentBytes).toBeGreaterThan(10 * MB);
    expect(oversized.sentBytes).toBeLessThan(60 * MB);
    expect(peakResidentMb(app) - before).toBeLessThan(50);

    // A body that passes 25 MB with no picture over its limit (a form field is cut at 4 KB and the
    // rest thrown away) is refused with 413 once the count passes 25 MB.
    resetPeakResident(app);
    const beforePadded = residentMb(app);
    const padded = await postChunked(`${app.baseUrl}${uploadAction}`, {
      totalBytes: ATTEMPT,
      preamble: '--x\r\nContent-Disposition: form-data; name="note"\r\n\r\n',
      headers: {
        'Content-Type': 'multipart/form-data; boundary=x',
        'Sec-Fetch-Site': 'same-origin',
        Cookie: cookie,
      },
    });
    expect(padded.status).toBe(413);
    expect(padded.body).toContain('too much to send');
    expect(padded.sentBytes).toBeGreaterThan(25 * MB);
    expect(padded.sentBytes).toBeLessThan(75 * MB);
    expect(peakResidentMb(app) - beforePadded).toBeLessThan(50);
  });
});

describe('slow clients', () => {
  it('130 connections trickling a body hold no API slot; each gets 408 within the 10 s limit', async () => {
    const sockets: Socket[] = [];
    const answers: string[] = [];
    const written: Promise<void>[] = [];
    for (let i = 0; i < 130; i++) {
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => {});
      let answer = '';
      socket.on('data', (data) => {
        answer += data.toString();
      });
      socket.on('close', () => answers.push(answer));
      written.push(
        new Promise((resolve) =>
          socket.write(
            'POST /v1/cases/ HTTP/1.1\r\nHost: localhost\r\n' +
              `Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
              'Transfer-Encoding: chunked\r\n\r\n1\r\n{',
            () => resolve(),
          ),
        ),
      );
      sockets.push(socket);
    }
    const sentAt = Date.now();
    // Every request is connected and written before the first ping connects: the server accepts
    // connections in the order they came, so it holds all 130 open requests when the pings arrive.
    await Promise.all(written);
    for (let i = 0; i < 20; i++) {
      const ping = await fetch(`${app.baseUrl}/v1/ping`);
      expect(ping.status).toBe(200);
    }
    const created = await apiClient(app.baseUrl, apiKey).post('/v1/cases/', {
      subject_email: 'prompt@acme.test',
      verification_methods: { email: true },
    });
    expect(created.status).toBe(201);

    const deadline = Date.now() + 20_000;
    while (answers.length < sockets.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Every connection was answered and closed by the server.
    expect(answers).toHaveLength(130);
    // The limit is 10 s, checked every second.
    expect(Date.now() - sentAt).toBeGreaterThan(9_000);
    expect(Date.now() - sentAt).toBeLessThan(15_000);
    const requestIds = new Set<string>();
    for (const answer of answers) {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
      const headers = new Map(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 2),
        ]),
      );
      expect(headers.get('request-id')).toMatch(/^req_/);
      requestIds.add(headers.get('request-id') ?? '');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('content-type')).toBe('application/json');
      expect(JSON.parse(body)).toMatchObject({ code: 'REQUEST_TIMEOUT', error: 'request_timeout' });
    }
    expect(requestIds.size).toBe(130);
  });

  it("Node's own refusals carry a Request-Id and security headers too", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(app.port, '127.0.0.1');
        let answer = '';
        socket.on('error', () => {});
        socket.on('data', (data) => {
          answer += data.toString();
        });
        socket.on('close', () => resolve(answer));
        socket.write(request);
      });
    const malformed = await raw('GARBAGE\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(malformed).toMatch(/\r\nRequest-Id: req_/);
    expect(malformed).toMatch(/\r\nX-Frame-Options: DENY\r\n/);
    const huge = await raw(
      `GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(huge).toMatch(/\r\nRequest-Id: req_/);
  });
});

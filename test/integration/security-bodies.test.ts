/**
 * Issue 11, findings 2 and 3: request bodies are counted as they stream and refused at their
 * limit (chunked or declared), the identity upload is judged before its body is read, and
 * clients that send slowly get 408 without taking the API's slots.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { postChunked, postDeclared, residentMb } from '@/test/support/abuse';
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
  // Few slots, so that slow clients would visibly take them all if they could.
  app = await startApp({ databaseUrl: database.url, env: { MAX_CONCURRENT_REQUESTS: '16' } });
  const { key } = await createTeam(database.db, { name: 'Acme', adminEmail: 'owner@acme.test' }, systemClock);
  apiKey = key.token;
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
      name: 'verification form',
      path: `/v/${publicId}/question`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
      // The subject's pages answer a form they cannot use by sending the browser back to the page.
      refused: 303,
    },
  ];
}

describe('request bodies', () => {
  it('a 300 MB chunked body is cut off at the limit on every surface, and memory stays flat', async () => {
    const { public_id } = await openCase(
      { custom_question: true },
      { custom_question_text: 'Colour?', custom_question_answer: 'Blue' },
    );
    const before = residentMb(app);
    for (const surface of surfaces(public_id)) {
      const answer = await postChunked(`${app.baseUrl}${surface.path}`, {
        totalBytes: ATTEMPT,
        headers: surface.headers,
      });
      expect(answer.status, surface.name).toBe(surface.refused);
      // Answered long before the client got near 300 MB: the server stopped reading at the limit.
      expect(answer.sentBytes, surface.name).toBeLessThan(50 * MB);
      if (surface.refused === 413) expect(answer.body, surface.name).toContain('PAYLOAD_TOO_LARGE');
    }
    expect(residentMb(app) - before).toBeLessThan(50);
    // Nothing was created from any of it.
    const list = await apiClient(app.baseUrl, apiKey).get<{ results: unknown[] }>('/v1/cases/');
    expect(list.status, list.text).toBe(200);
    expect(list.body.results).toHaveLength(1);
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
    const before = residentMb(app);

    // No token: refused at once, nothing read.
    const forged = await postChunked(`${app.baseUrl}/v/${public_id}/identity`, {
      totalBytes: ATTEMPT,
      headers: { 'Content-Type': 'multipart/form-data; boundary=x', 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(forged.status).toBe(303);
    expect(forged.headers.location).toContain('n=form-expired');
    expect(forged.sentBytes).toBeLessThan(25 * MB);

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
    expect(residentMb(app) - before).toBeLessThan(50);
  });
});

describe('slow clients', () => {
  it('130 connections trickling a body hold no API slot; each gets 408 within the 10 s limit', async () => {
    const sockets: Socket[] = [];
    const firstLines: string[] = [];
    for (let i = 0; i < 130; i++) {
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.on('data', (data) => firstLines.push(data.toString().split('\r\n')[0] ?? ''));
      socket.write(
        'POST /v1/cases/ HTTP/1.1\r\nHost: localhost\r\n' +
          `Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
          'Transfer-Encoding: chunked\r\n\r\n1\r\n{',
      );
      sockets.push(socket);
    }
    const sentAt = Date.now();
    // Every one of them has reached the server and is waiting for its body.
    await new Promise((resolve) => setTimeout(resolve, 500));
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
    while (firstLines.length < sockets.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(firstLines).toHaveLength(130);
    expect(new Set(firstLines)).toEqual(new Set(['HTTP/1.1 408 Request Timeout']));
    // The limit is 10 s, checked every second.
    expect(Date.now() - sentAt).toBeGreaterThan(9_000);
    expect(Date.now() - sentAt).toBeLessThan(15_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sockets.every((socket) => socket.destroyed || socket.readyState === 'closed')).toBe(true);
  });
});

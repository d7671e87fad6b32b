/**
 * While PostgreSQL is unreachable the API answers 503 SERVICE_UNAVAILABLE with Retry-After within
 * 2 s (never hangs, never a 500), the subject's pages answer a plain 503 page, `/readyz` says
 * `database` within 2 s while `/livez` stays 200, the workers wait, and everything recovers by
 * itself when the database is back. A real PostgreSQL is stopped under load.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, migrateDatabase } from '@/db/client';
import { devMailbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { eventually } from '@/test/support/https-receiver';
import { expectServerErrors } from '@/test/support/openapi-conformance';
import { type StoppablePostgres, startStoppablePostgres } from '@/test/support/stoppable-postgres';

let postgres: StoppablePostgres;
let app: RunningApp;
let apiKey: string;

beforeAll(async () => {
  postgres = await startStoppablePostgres();
  await migrateDatabase(postgres.url);
  app = await startApp({
    databaseUrl: postgres.url,
    // The load below reads as fast as answers come back, for longer than a minute's read budget lasts.
    env: { JOB_TICK_SECONDS: '1', LOG_LEVEL: 'warn', RATE_LIMIT_READ_PER_MINUTE: '100000' },
  });
  const database = connectDatabase(postgres.url, { max: 1 });
  try {
    const { key } = await createTeam(
      database.db,
      { name: 'Outage', adminEmail: 'a@outage.test' },
      systemClock,
    );
    apiKey = key.token;
  } finally {
    await database.close();
  }
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await postgres?.close();
});

interface Timed {
  status: number;
  ms: number;
  retryAfter: string | null;
  code?: string;
}

async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {
    // a page
  }
  return {
    status: res.status,
    ms: performance.now() - started,
    retryAfter: res.headers.get('retry-after'),
    code,
  };
}

/** A health endpoint's answer, its JSON and how long it took. */
async function health(path: '/livez' | '/readyz') {
  const started = performance.now();
  const res = await fetch(`${app.baseUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as unknown, ms: performance.now() - started };
}

describe('a database outage', () => {
  it('is answered 503 with Retry-After within 2 s, and everything recovers by itself', async () => {
    // The outage's 503s are what this test provokes.
    expectServerErrors();
    const api = apiClient(app.baseUrl, apiKey);
    const body = { subject_email: 'before@outage.test', verification_methods: { email: true } };
    const created = await api.post<{ id: string; public_id: string }>('/v1/cases/', body);
    expect(created.status).toBe(201);
    const caseUrl = `${app.baseUrl}/v1/cases/${created.body.id}/`;
    const auth = { headers: { Authorization: `Bearer ${apiKey}` } };

    // Load all along: reads of the case, four at a time, until the end of the test.
    const seen: Timed[] = [];
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (loading) seen.push(await timed(caseUrl, auth));
      }),
    );

    expect(await health('/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
    await postgres.stop();
    const during: Timed[] = [];
    const outageEnds = Date.now() + 4_000;
    while (Date.now() < outageEnds) {
      during.push(await timed(caseUrl, auth));
      during.push(
        await timed(`${app.baseUrl}/v1/cases/`, {
          method: 'POST',
          headers: { ...auth.headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...body, subject_email: 'during@outage.test' }),
        }),
      );
      const page = await timed(`${app.baseUrl}/v/${created.body.public_id}`);
      expect(page.status).toBe(503);
      expect(page.retryAfter).toBe('2');
      // The console's calls too (a session cookie makes the call look its session up).
      const consoleCall = await timed(`${app.baseUrl}/api/trpc/console.session.me`, {
        headers: { Cookie: 'vouch.session_token=some-token.some-signature' },
      });
      expect(consoleCall.status).toBe(503);
      // Unready, saying why, within 2 s; alive all along (a liveness probe restarts nothing).
      const readiness = await health('/readyz');
      expect(readiness).toMatchObject({ status: 503, body: { status: 'unready', reasons: ['database'] } });
      expect(readiness.ms).toBeLessThan(2_000);
      expect(await health('/livez')).toMatchObject({ status: 200, body: { status: 'live' } });
    }
    for (const answer of during) {
      expect(answer).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '2' });
      expect(answer.ms).toBeLessThan(2_000);
    }

    await postgres.start();
    await eventually(async () => (await timed(caseUrl, auth)).status === 200, 20_000);
    await eventually(async () => (await health('/readyz')).status === 200, 20_000);
    const after = await api.post<{ id: string }>('/v1/cases/', {
      ...body,
      subject_email: 'after@outage.test',
    });
    expect(after.status).toBe(201);
    loading = false;
    await load;

    // Under load, every answer was a 200 or a prompt 503: never a 500, never a hang.
    expect(seen.length).toBeGreaterThan(10);
    expect(new Set(seen.map((answer) => answer.status))).toEqual(new Set([200, 503]));
    expect(Math.max(...seen.map((answer) => answer.ms))).toBeLessThan(2_500);

    // The workers came back too: the mail of the case created after the outage is sent.
    const database = connectDatabase(postgres.url, { max: 1 });
    try {
      await eventually(async () => {
        const rows = await database.db.select().from(devMailbox);
        return rows.some((row) => row.to === 'after@outage.test');
      }, 20_000);
    } finally {
      await database.close();
    }
    // Named in full when one is there, so a failure says which.
    const errorLines = app
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":"error"'));
    expect(errorLines).toEqual([]);
  }, 90_000);
});

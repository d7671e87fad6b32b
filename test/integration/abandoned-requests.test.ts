import http from 'node:http';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cases } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Debug logs: the request lines say when the app saw the client leave and dropped its request.
  app = await startApp({ databaseUrl: database.url, env: { LOG_LEVEL: 'debug' } });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The app's JSON log lines so far. */
function logLines(): Array<Record<string, unknown>> {
  return app
    .logs()
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return []; // not JSON, or the last line still being written
      }
    });
}

/** Backends of the app's pool waiting for a row lock. */
async function appBackendsWaitingForALock(): Promise<number> {
  const [row] = (await database.db.execute(sql`
    select count(*)::int as waiting from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'
  `)) as unknown as Array<{ waiting: number }>;
  return row?.waiting ?? 0;
}

describe('a request whose client has gone', () => {
  it('is not served: a case whose client disconnected while it waited is not created', async () => {
    const { team, key } = await createTeam(
      database.db,
      { name: 'Impatient', adminEmail: 'admin@impatient.test', planCode: 'starter' },
      systemClock,
    );
    const api = apiClient(app.baseUrl, key.token);
    const body = { subject_email: 'first@impatient.test', verification_methods: { email: true } };
    expect((await api.post('/v1/cases/', body)).status).toBe(201);

    // Hold the team's write budget row: the next creation waits in the rate-limit middleware,
    // before any of its own work, as a request waits behind others when the service is busy.
    const released = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const holding = database.sql.begin(async (tx) => {
      await tx`select * from rate_limits where key = ${`write:${team.id}`} for update`;
      locked.resolve();
      await released.promise;
    });
    // The lock is held before the request is sent: a fast request would otherwise take the row
    // first and never wait.
    await locked.promise;

    const payload = JSON.stringify({ ...body, subject_email: 'gone@impatient.test' });
    const url = new URL('/v1/cases/', app.baseUrl);
    const abandoned = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      },
    });
    const settled = new Promise<void>((resolve) => {
      abandoned.on('error', () => resolve());
      abandoned.on('close', () => resolve());
    });
    abandoned.end(payload);
    await until(async () => (await appBackendsWaitingForALock()) > 0, 'the creation waits for the lock');

    // The client gives up; once the app has seen the connection close, the lock is released.
    abandoned.destroy();
    await settled;
    let requestId = '';
    await until(async () => {
      const line = logLines().find(
        (l) => l.message === 'request' && l.method === 'POST' && l.path === '/v1/cases/' && l.status === 499,
      );
      requestId = String(line?.request_id ?? '');
      return line !== undefined;
    }, 'the app saw the client leave');
    released.resolve();
    await holding;
    await until(async () => (await appBackendsWaitingForALock()) === 0, 'the creation got past the lock');
    // The request itself has finished: dropped, not served.
    await until(
      async () =>
        logLines().some(
          (l) => l.request_id === requestId && l.message === 'request dropped: its client had gone',
        ),
      'the app dropped the request',
    );

    const created = await database.db
      .select({ email: cases.subjectEmail })
      .from(cases)
      .where(eq(cases.teamId, team.id));
    expect(created.map((c) => c.email)).toEqual(['first@impatient.test']);

    // The service goes on serving everyone else.
    const next = await api.post('/v1/cases/', { ...body, subject_email: 'next@impatient.test' });
    expect(next.status).toBe(201);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

let database: TestDatabase;
let app: RunningApp;
let teamId: string;
let api: ReturnType<typeof apiClient>;
let other: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000' },
  });
  const a = await createTeam(
    database.db,
    { name: 'Idem', adminEmail: 'admin@idem.test', planCode: 'enterprise' },
    systemClock,
  );
  const b = await createTeam(
    database.db,
    { name: 'Idem other', adminEmail: 'admin@idem-other.test', planCode: 'enterprise' },
    systemClock,
  );
  teamId = a.team.id;
  api = apiClient(app.baseUrl, a.key.token);
  other = apiClient(app.baseUrl, b.key.token);
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const body = (email: string) => ({ subject_email: email, verification_methods: { email: true } });
const withKey = (key: string) => ({ 'Idempotency-Key': key });

async function countCases(email: string): Promise<number> {
  const [row] = await database.sql<
    { n: number }[]
  >`select count(*)::int as n from cases where subject_email = ${email}`;
  return row?.n ?? 0;
}

describe('Idempotency-Key on POST /v1/cases/', () => {
  it('replays the stored answer: same status, same body, Idempotent-Replayed: true, no second case', async () => {
    const first = await api.post('/v1/cases/', body('replay@idem.test'), withKey('replay-1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await api.post('/v1/cases/', body('replay@idem.test'), withKey('replay-1'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(await countCases('replay@idem.test')).toBe(1);
  });

  it('treats the same body with its keys in another order as the same request', async () => {
    const first = await api.post(
      '/v1/cases/',
      { notes: 'x', ...body('order@idem.test') },
      withKey('order-1'),
    );
    const second = await api.request('POST', '/v1/cases/', {
      rawBody: '{"verification_methods":{"email":true},"subject_email":"order@idem.test","notes":"x"}',
      headers: { 'Content-Type': 'application/json', ...withKey('order-1') },
    });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
  });

  it('422 IDEMPOTENCY_KEY_REUSED for the same key with another body, and nothing is created', async () => {
    expect((await api.post('/v1/cases/', body('reuse@idem.test'), withKey('reuse-1'))).status).toBe(201);
    const res = await api.post('/v1/cases/', body('reuse-other@idem.test'), withKey('reuse-1'));
    expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await countCases('reuse-other@idem.test')).toBe(0);
  });

  it('400 INVALID_IDEMPOTENCY_KEY for a key over 64 characters, even with an invalid body', async () => {
    const long = 'k'.repeat(65);
    expectError(
      await api.post('/v1/cases/', body('long@idem.test'), withKey(long)),
      400,
      'INVALID_IDEMPOTENCY_KEY',
    );
    expectError(await api.post('/v1/cases/', { nonsense: 1 }, withKey(long)), 400, 'INVALID_IDEMPOTENCY_KEY');
    expect(await countCases('long@idem.test')).toBe(0);
    // 64 is allowed.
    expect((await api.post('/v1/cases/', body('long@idem.test'), withKey('k'.repeat(64)))).status).toBe(201);
  });

  it('400 INVALID_IDEMPOTENCY_KEY for an empty key or one with spaces', async () => {
    for (const key of ['', 'has space', 'tab\there']) {
      const res = await api.post('/v1/cases/', body('blank@idem.test'), withKey(key));
      expectError(res, 400, 'INVALID_IDEMPOTENCY_KEY');
    }
    expect(await countCases('blank@idem.test')).toBe(0);
  });

  it('409 IDEMPOTENCY_KEY_EXPIRED for a key first used over 24 hours ago', async () => {
    expect((await api.post('/v1/cases/', body('old@idem.test'), withKey('old-1'))).status).toBe(201);
    await database.sql`
      update idempotency_keys set created_at = now() - interval '24 hours 1 minute'
      where team_id = ${teamId} and key = 'old-1'`;
    expectError(
      await api.post('/v1/cases/', body('old@idem.test'), withKey('old-1')),
      409,
      'IDEMPOTENCY_KEY_EXPIRED',
    );
    expect(await countCases('old@idem.test')).toBe(1);
    // Just under 24 hours still replays.
    expect((await api.post('/v1/cases/', body('young@idem.test'), withKey('young-1'))).status).toBe(201);
    await database.sql`
      update idempotency_keys set created_at = now() - interval '23 hours 59 minutes'
      where team_id = ${teamId} and key = 'young-1'`;
    const replay = await api.post('/v1/cases/', body('young@idem.test'), withKey('young-1'));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('409 IDEMPOTENCY_KEY_IN_USE with Retry-After while the first request is still running', async () => {
    // Hold the team's charging lock so that the first request stops inside its transaction.
    const holder = await database.sql.reserve();
    await holder`begin`;
    await holder`select id from teams where id = ${teamId} for no key update`;
    // Whatever happens, the lock is released within 15 s, so a failure here cannot hang the file.
    const release = setTimeout(() => holder`rollback`.catch(() => {}), 15_000);
    try {
      const first = api.post('/v1/cases/', body('inuse@idem.test'), withKey('inuse-1'));
      // Wait until the first request has claimed the key.
      for (let i = 0; i < 100; i++) {
        const [row] =
          await database.sql`select 1 from idempotency_keys where team_id = ${teamId} and key = 'inuse-1'`;
        if (row) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const second = await api.post('/v1/cases/', body('inuse@idem.test'), withKey('inuse-1'));
      expectError(second, 409, 'IDEMPOTENCY_KEY_IN_USE');
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await holder`rollback`;
      const done = await first;
      expect(done.status).toBe(201);
      const third = await api.post('/v1/cases/', body('inuse@idem.test'), withKey('inuse-1'));
      expect(third.status).toBe(201);
      expect(third.text).toBe(done.text);
    } finally {
      clearTimeout(release);
      await holder`rollback`.catch(() => {});
      holder.release();
    }
    expect(await countCases('inuse@idem.test')).toBe(1);
  });

  it('N parallel requests with one key create exactly one case', async () => {
    const N = 20;
    const results = await Promise.all(
      Array.from({ length: N }, () => api.post('/v1/cases/', body('race@idem.test'), withKey('race-1'))),
    );
    const statuses = results.map((r) => r.status);
    for (const res of results) {
      if (res.status === 409) expectError(res, 409, 'IDEMPOTENCY_KEY_IN_USE');
      else expect(res.status).toBe(201);
    }
    const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(fresh, statuses.join(',')).toHaveLength(1);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => (r.body as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(await countCases('race@idem.test')).toBe(1);
    // Everyone retrying afterwards gets the same answer.
    const retry = await api.post('/v1/cases/', body('race@idem.test'), withKey('race-1'));
    expect(retry.text).toBe(fresh[0]?.text);
  });

  it('an error is not stored: a retry after the cause is fixed succeeds', async () => {
    await updateTeam(database.db, teamId, { subscriptionStatus: 'canceled' });
    try {
      const refused = await api.post('/v1/cases/', body('fixed@idem.test'), withKey('fixed-1'));
      expectError(refused, 422, 'TRIAL_EXPIRED');
    } finally {
      await updateTeam(database.db, teamId, { subscriptionStatus: 'active' });
    }
    const retried = await api.post('/v1/cases/', body('fixed@idem.test'), withKey('fixed-1'));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await countCases('fixed@idem.test')).toBe(1);
  });

  it('a validation error is not stored either: the key then serves a valid body', async () => {
    expectError(
      await api.post('/v1/cases/', { subject_email: 'nope' }, withKey('val-1')),
      422,
      'VALIDATION_ERROR',
    );
    expect((await api.post('/v1/cases/', body('val@idem.test'), withKey('val-1'))).status).toBe(201);
  });

  it('keys are per team: another team using the same key gets its own case', async () => {
    const mine = await api.post('/v1/cases/', body('team-a@idem.test'), withKey('shared-1'));
    const theirs = await other.post('/v1/cases/', body('team-b@idem.test'), withKey('shared-1'));
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect((theirs.body as { id: string }).id).not.toBe((mine.body as { id: string }).id);
    // and each team's replay is its own.
    const replay = await other.post('/v1/cases/', body('team-b@idem.test'), withKey('shared-1'));
    expect(replay.text).toBe(theirs.text);
  });

  it('without a key, two identical requests create two cases', async () => {
    await api.post('/v1/cases/', body('nokey@idem.test'));
    await api.post('/v1/cases/', body('nokey@idem.test'));
    expect(await countCases('nokey@idem.test')).toBe(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '@/server/auth/api-keys';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

let database: TestDatabase;
let app: RunningApp;

interface CaseBody {
  id: string;
  subject_email: string;
}
interface Page {
  next: string | null;
  results: CaseBody[];
}

const teams: Record<'a' | 'b', { id: string; api: ReturnType<typeof apiClient>; cases: CaseBody[] }> =
  {} as never;
const SHARED_EMAIL = 'same.person@isolation.test';

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000' },
  });
  for (const name of ['a', 'b'] as const) {
    const { team, key } = await createTeam(
      database.db,
      { name: `Team ${name}`, adminEmail: `admin@${name}.isolation.test`, planCode: 'starter' },
      systemClock,
    );
    const api = apiClient(app.baseUrl, key.token);
    const cases: CaseBody[] = [];
    // More than a page each, with the same subject in both teams.
    for (let i = 0; i < 60; i++) {
      const res = await api.post<CaseBody>('/v1/cases/', {
        subject_email: i % 2 ? SHARED_EMAIL : `${name}${i}@isolation.test`,
        verification_methods: { email: true },
      });
      expect(res.status).toBe(201);
      cases.push(res.body);
    }
    teams[name] = { id: team.id, api, cases };
  }
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function listAll(api: ReturnType<typeof apiClient>, query = ''): Promise<CaseBody[]> {
  const all: CaseBody[] = [];
  let url: string | null = `/v1/cases/${query}`;
  while (url) {
    const res: { status: number; body: Page } = await api.get<Page>(url);
    expect(res.status).toBe(200);
    all.push(...res.body.results);
    url = res.body.next;
  }
  return all;
}

describe('cross-team isolation', () => {
  it("GET /v1/cases/{id}/ of another team's case answers exactly like a missing case", async () => {
    const foreign = teams.a.cases[0]?.id as string;
    const asB = await teams.b.api.get(`/v1/cases/${foreign}/`);
    const missing = await teams.b.api.get('/v1/cases/00000000-0000-4000-8000-000000000000/');
    expectError(asB, 404, 'NOT_FOUND');
    expectError(missing, 404, 'NOT_FOUND');
    expect(asB.text).toBe(missing.text);
    const names = (res: typeof asB) =>
      [...res.headers.keys()]
        .filter((h) => !['date', 'x-ratelimit-remaining', 'x-ratelimit-reset'].includes(h))
        .sort();
    expect(names(asB)).toEqual(names(missing));
    // while its owner reads it.
    expect((await teams.a.api.get(`/v1/cases/${foreign}/`)).status).toBe(200);
  });

  it("every one of another team's cases is a 404", async () => {
    for (const c of teams.a.cases.slice(0, 20))
      expectError(await teams.b.api.get(`/v1/cases/${c.id}/`), 404, 'NOT_FOUND');
    for (const c of teams.b.cases.slice(0, 20))
      expectError(await teams.a.api.get(`/v1/cases/${c.id}/`), 404, 'NOT_FOUND');
  });

  it('GET /v1/cases/ lists only the caller’s cases, with and without filters', async () => {
    for (const name of ['a', 'b'] as const) {
      const own = new Set(teams[name].cases.map((c) => c.id));
      const all = await listAll(teams[name].api);
      expect(all).toHaveLength(own.size);
      for (const c of all) expect(own.has(c.id)).toBe(true);
      const shared = await listAll(teams[name].api, `?subject_email=${encodeURIComponent(SHARED_EMAIL)}`);
      expect(shared).toHaveLength(30);
      for (const c of shared) expect(own.has(c.id)).toBe(true);
      for (const c of await listAll(teams[name].api, '?status=open')) expect(own.has(c.id)).toBe(true);
    }
  });

  it("following another team's next URL shows only the caller's cases", async () => {
    // A cursor is a position in time: team a's cases are all older than team b's, so b past a's
    // cursor has nothing left, and a past b's cursor gets its own list from the top.
    const pageOfA = await teams.a.api.get<Page>('/v1/cases/');
    const pageOfB = await teams.b.api.get<Page>('/v1/cases/');
    expect([pageOfA.status, pageOfB.status]).toEqual([200, 200]);
    const bPastA = await teams.b.api.get<Page>(pageOfA.body.next as string);
    expect(bPastA.status).toBe(200);
    expect(bPastA.body.results).toEqual([]);
    const aPastB = await teams.a.api.get<Page>(pageOfB.body.next as string);
    expect(aPastB.status).toBe(200);
    expect(aPastB.body.results.map((c) => c.id)).toEqual(pageOfA.body.results.map((c) => c.id));
    expect(aPastB.body.results.length).toBeGreaterThan(0);
  });

  it('GET /v1/account/ and /v1/account/usage/ are the caller’s own', async () => {
    await teams.a.api.post('/v1/cases/', {
      subject_email: 'extra@isolation.test',
      verification_methods: { sms: true },
    });
    const accountA = await teams.a.api.get<{ id: string; name: string }>('/v1/account/');
    const accountB = await teams.b.api.get<{ id: string; name: string }>('/v1/account/');
    expect(accountA.body).toMatchObject({ id: teams.a.id, name: 'Team a' });
    expect(accountB.body).toMatchObject({ id: teams.b.id, name: 'Team b' });
    type Usage = { usage: Record<string, { included_used: number }> };
    const usageA = await teams.a.api.get<Usage>('/v1/account/usage/');
    const usageB = await teams.b.api.get<Usage>('/v1/account/usage/');
    expect(usageA.body.usage.email?.included_used).toBe(60);
    expect(usageA.body.usage.sms?.included_used).toBe(1);
    expect(usageB.body.usage.email?.included_used).toBe(60);
    expect(usageB.body.usage.sms?.included_used).toBe(0);
  });

  it('all keys of one team see the same cases; a new team sees none', async () => {
    const second = await createApiKey(database.db, { teamId: teams.a.id, name: 'second' });
    const viaSecond = await listAll(apiClient(app.baseUrl, second.token));
    expect(viaSecond.map((c) => c.id).sort()).toEqual((await listAll(teams.a.api)).map((c) => c.id).sort());
    const fresh = await createTeam(
      database.db,
      { name: 'Fresh', adminEmail: 'f@isolation.test' },
      systemClock,
    );
    const freshApi = apiClient(app.baseUrl, fresh.key.token);
    expect((await freshApi.get<Page>('/v1/cases/')).body.results).toEqual([]);
    expect(
      (await freshApi.get<Page>(`/v1/cases/?subject_email=${encodeURIComponent(SHARED_EMAIL)}`)).body.results,
    ).toEqual([]);
  });
});

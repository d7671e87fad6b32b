import { fillPlaceholders } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCasesQuery, listCasesValues, listShape, PAGE_SIZE } from '@/server/application/cases/list-cases';
import type { ListCasesInput } from '@/server/application/cases/wire';
import { systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { decodeCursor, encodeCursor } from '@/server/platform/pagination';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import { eventually } from '@/test/support/https-receiver';
import { jobsOf } from '@/test/support/jobs';

const CASE_COUNT = 240;
const API_CASES = 40;

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;
let teamId: string;

interface CaseBody {
  id: string;
  status: string;
  subject_email: string;
  created_at: string;
}
interface Page {
  next: string | null;
  previous: string | null;
  results: CaseBody[];
}

const emailOf = (i: number) => `p${Math.floor(i / 3) % 2}@list.test`;

async function createCases(count: number, offset = 0): Promise<CaseBody[]> {
  const created: CaseBody[] = [];
  const batch = 8;
  for (let start = 0; start < count; start += batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(batch, count - start) }, (_, j) =>
        api.post<CaseBody>('/v1/cases/', {
          subject_email: emailOf(offset + start + j),
          verification_methods: { email: true },
        }),
      ),
    );
    for (const res of results) {
      expect(res.status).toBe(201);
      created.push(res.body);
    }
  }
  return created;
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      RATE_LIMIT_READ_PER_MINUTE: '1000000',
      RATE_LIMIT_WRITE_PER_MINUTE: '1000000',
      // No sweep while the file runs: the open cases past their deadline must stay unswept.
      JOB_TICK_SECONDS: '3600',
    },
  });
  const { team, key } = await createTeam(
    database.db,
    { name: 'List', adminEmail: 'admin@list.test', planCode: 'enterprise' },
    systemClock,
  );
  teamId = team.id;
  api = apiClient(app.baseUrl, key.token);
  // Most cases are written straight into the table (creating 200 over HTTP only slows the file
  // down), two by two with the same created_at so that the id tie-break is exercised; the newest
  // come through the API.
  await database.sql`
    insert into cases (team_id, public_id, subject_email, created_at, expires_at)
    select ${teamId}, 'seed' || g, 'p' || ((g / 3) % 2) || '@list.test',
           date_trunc('milliseconds', now()) - interval '1 hour' - (g / 2) * interval '1 second',
           now() + interval '2 days'
    from generate_series(1, ${CASE_COUNT - API_CASES}) g`;
  await createCases(API_CASES);
  // The worker sweeps once as it starts, then not for an hour: wait for that sweep, or it may
  // come after the update below and sweep the open cases past their deadline it sets.
  await eventually(
    async () => (await jobsOf(database, QUEUES.casesExpire)).some((job) => job.state === 'completed'),
    60_000,
  );
  // Closed and failed cases come from the verification flow; here they are set directly, spread
  // over the whole list so that every status filter spans several pages.
  // Expired cases come both ways: swept (status 'expired') and still 'open' past their deadline,
  // which the API reads as expired at once (the app's sweep is kept away: JOB_TICK_SECONDS).
  await database.sql`
    update cases
       set status = case (rn % 8) when 1 then 'closed' when 5 then 'closed' when 2 then 'failed'
                                  when 6 then 'failed' when 3 then 'expired' else 'open' end,
           expires_at = case (rn % 8) when 7 then now() - interval '1 minute' else expires_at end
    from (select id, row_number() over (order by created_at, id) as rn from cases where team_id = ${teamId}) o
    where cases.id = o.id`;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** The ids the list must return, newest first, computed independently in SQL. */
async function expectedIds(filters: Record<string, string>): Promise<string[]> {
  const rows = await database.sql<{ id: string }[]>`
    select id from cases
    where team_id = ${teamId}
      and (${filters.status ?? null}::text is null
           or (${filters.status ?? null} = 'open' and status = 'open' and expires_at > now())
           or (${filters.status ?? null} = 'expired'
               and (status = 'expired' or (status = 'open' and expires_at <= now())))
           or (${filters.status ?? null} not in ('open', 'expired') and status = ${filters.status ?? null}))
      and (${filters.subject_email ?? null}::text is null or subject_email = ${filters.subject_email ?? null})
      and (${filters.created_after ?? null}::timestamptz is null or created_at > ${filters.created_after ?? null})
      and (${filters.created_before ?? null}::timestamptz is null or created_at < ${filters.created_before ?? null})
    order by created_at desc, id desc`;
  return rows.map((r) => r.id);
}

function listUrl(filters: Record<string, string>): string {
  const query = new URLSearchParams(filters).toString();
  return `/v1/cases/${query ? `?${query}` : ''}`;
}

async function getPage(url: string): Promise<Page> {
  const res = await api.get<Page>(url);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Checks that a next/previous URL is absolute, on this API, and keeps exactly the filters. */
function expectFiltersKept(url: string, filters: Record<string, string>): void {
  const parsed = new URL(url);
  expect(`${parsed.origin}${parsed.pathname}`).toBe(`${app.baseUrl}/v1/cases/`);
  const params = Object.fromEntries(parsed.searchParams);
  expect(params.cursor).toBeTruthy();
  delete params.cursor;
  expect(params).toEqual(filters);
}

async function walkForward(filters: Record<string, string>, between?: () => Promise<unknown>) {
  const pages: Page[] = [];
  let url: string | null = listUrl(filters);
  while (url) {
    const page: Page = await getPage(url);
    pages.push(page);
    if (page.next) expectFiltersKept(page.next, filters);
    if (page.previous) expectFiltersKept(page.previous, filters);
    url = page.next;
    if (url && between) await between();
  }
  return pages;
}

const FILTERS: Array<[string, () => Promise<Record<string, string>>]> = [
  ['no filter', async () => ({})],
  ['status=open', async () => ({ status: 'open' })],
  ['status=closed', async () => ({ status: 'closed' })],
  ['status=failed', async () => ({ status: 'failed' })],
  ['status=expired', async () => ({ status: 'expired' })],
  ['subject_email', async () => ({ subject_email: 'p0@list.test' })],
  ['created_after', async () => ({ created_after: await nthCreatedAt(200) })],
  ['created_before', async () => ({ created_before: await nthCreatedAt(40) })],
  [
    'created_after and created_before',
    async () => ({ created_after: await nthCreatedAt(220), created_before: await nthCreatedAt(30) }),
  ],
  [
    'status, subject_email and a date range combined',
    async () => ({
      status: 'open',
      subject_email: 'p1@list.test',
      created_after: await nthCreatedAt(235),
      created_before: await nthCreatedAt(2),
    }),
  ],
];

/** created_at of the n-th newest case, as an ISO string (in a +02:00 offset, to test offsets too). */
async function nthCreatedAt(n: number): Promise<string> {
  const [row] = await database.sql<{ t: string }[]>`
    select to_char(created_at at time zone interval '+02:00', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+02:00"') as t
    from cases where team_id = ${teamId} order by created_at desc, id desc offset ${n} limit 1`;
  if (!row) throw new Error(`no case at ${n}`);
  return row.t;
}

describe('GET /v1/cases/ pagination', () => {
  it.each(FILTERS)(
    '%s: 50 per page, newest first, next then previous return the same pages',
    async (_n, make) => {
      const filters = await make();
      const expected = await expectedIds(filters);
      const pages = await walkForward(filters);

      const ids = pages.flatMap((p) => p.results.map((c) => c.id));
      expect(ids).toEqual(expected);
      expect(new Set(ids).size).toBe(ids.length);
      expect(pages).toHaveLength(Math.max(1, Math.ceil(expected.length / PAGE_SIZE)));
      for (const page of pages.slice(0, -1)) expect(page.results).toHaveLength(PAGE_SIZE);
      expect(pages[0]?.previous).toBeNull();
      expect(pages.at(-1)?.next).toBeNull();
      for (const page of pages) {
        for (const c of page.results) {
          if (filters.status) expect(c.status).toBe(filters.status);
          if (filters.subject_email) expect(c.subject_email).toBe(filters.subject_email);
        }
      }

      // Back from the last page to the first: the same pages in reverse.
      const back: Page[] = [pages.at(-1) as Page];
      while (back.at(-1)?.previous) back.push(await getPage(back.at(-1)?.previous as string));
      expect(back.map((p) => p.results.map((c) => c.id)).reverse()).toEqual(
        pages.map((p) => p.results.map((c) => c.id)),
      );
      expect(back.at(-1)?.previous).toBeNull();
      // and forward again from a page reached backwards.
      if (back.length > 1) {
        const again = await getPage(back.at(-1)?.next as string);
        expect(again.results.map((c) => c.id)).toEqual(pages[1]?.results.map((c) => c.id));
      }
    },
  );

  it('the filters exercised here span several pages', async () => {
    for (const filters of [
      {},
      { status: 'open' },
      { status: 'closed' },
      { status: 'failed' },
      { status: 'expired' },
      { subject_email: 'p0@list.test' },
    ] as Array<Record<string, string>>) {
      expect((await expectedIds(filters)).length).toBeGreaterThan(PAGE_SIZE);
    }
    // The expired pages hold both kinds: swept, and open past the deadline (not yet swept).
    const [kinds] = await database.sql<{ swept: number; unswept: number }[]>`
      select count(*) filter (where status = 'expired')::int as swept,
             count(*) filter (where status = 'open' and expires_at <= now())::int as unswept
        from cases where team_id = ${teamId}`;
    expect(kinds?.swept).toBeGreaterThan(PAGE_SIZE / 2);
    expect(kinds?.unswept).toBeGreaterThan(PAGE_SIZE / 2);
  });

  it('no duplicates and no gaps while cases are created during the walk', async () => {
    const filters = { subject_email: 'p1@list.test' };
    const before = await expectedIds(filters);
    let round = 0;
    const pages = await walkForward(filters, () => createCases(6, 1000 + 6 * round++));
    const ids = pages.flatMap((p) => p.results.map((c) => c.id));
    expect(ids).toEqual(before);

    // Walking back reaches the original first page, then the cases created meanwhile, oldest first.
    const back: Page[] = [pages.at(-1) as Page];
    while (back.at(-1)?.previous) back.push(await getPage(back.at(-1)?.previous as string));
    const backIds = back
      .slice()
      .reverse()
      .flatMap((p) => p.results.map((c) => c.id));
    const now = await expectedIds(filters);
    expect(now.length).toBeGreaterThan(before.length);
    expect(backIds).toEqual(now);
    expect(new Set(backIds).size).toBe(backIds.length);
  });

  it('a tampered or foreign cursor is a 422, never a 500', async () => {
    const first = await getPage('/v1/cases/');
    const cursor = new URL(first.next as string).searchParams.get('cursor') as string;
    const decoded = decodeCursor(cursor);
    const tampered = [
      `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`,
      cursor.slice(0, -3),
      'not-a-cursor',
      '!!!!',
      Buffer.from('{"t":"yesterday","i":"x","d":"n"}').toString('base64url'),
      Buffer.from(JSON.stringify({ t: decoded.createdAt.toISOString(), i: decoded.id, d: 'x' })).toString(
        'base64url',
      ),
      Buffer.from('[1,2,3]').toString('base64url'),
      Buffer.from('null').toString('base64url'),
      'x'.repeat(500),
    ];
    for (const bad of tampered) {
      const res = await api.get(`/v1/cases/?cursor=${encodeURIComponent(bad)}`);
      expectError(res, 422, 'VALIDATION_ERROR');
      expect((res.body as { detail: string }).detail).toContain('cursor');
    }
    // A well-formed cursor is only a position: it never shows another team's cases.
    const other = await createTeam(database.db, { name: 'Other', adminEmail: 'o@list.test' }, systemClock);
    const otherApi = apiClient(app.baseUrl, other.key.token);
    const foreign = await otherApi.get<Page>(`/v1/cases/?cursor=${cursor}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body.results).toEqual([]);
  });

  it.each([
    ['status=bogus', 'status'],
    ['status=', 'status'],
    ['created_after=yesterday', 'created_after'],
    ['created_before=2026-13-45T00:00:00Z', 'created_before'],
    ['page=2', 'page'],
    ['limit=10', 'limit'],
    ['offset=50', 'offset'],
  ])('?%s is a 422 VALIDATION_ERROR', async (query, field) => {
    const res = await api.get(`/v1/cases/?${query}`);
    expectError(res, 422, 'VALIDATION_ERROR');
    expect((res.body as { detail: string }).detail).toContain(field);
  });
});

describe('list queries use the indexes', () => {
  it('EXPLAIN shows ordered index scans (no seq scan, no team-wide sort, no OFFSET) for every filter, with and without a cursor', async () => {
    // A big team among many others, so that the planner's choice means something.
    const [big] = await database.sql<{ id: string }[]>`
      insert into teams (name, plan_code, subscription_status) values ('Big', 'enterprise', 'active') returning id`;
    const bigTeam = big?.id as string;
    await database.sql`
      insert into teams (name, plan_code, subscription_status)
      select 'filler ' || g, 'starter', 'active' from generate_series(1, 100) g`;
    await database.sql`
      insert into cases (team_id, public_id, status, subject_email, created_at, expires_at)
      select t.id, md5(t.id::text || g), (array['open','closed','failed'])[1 + g % 3], 's' || (g % 40) || '@x.test',
             date_trunc('milliseconds', now() - g * interval '1 second'), now() + interval '2 days'
      from teams t, generate_series(1, 300) g where t.name like 'filler %'`;
    await database.sql`
      insert into cases (team_id, public_id, status, subject_email, created_at, expires_at)
      select ${bigTeam}, md5('big' || g), (array['open','closed','failed'])[1 + g % 3], 's' || (g % 40) || '@x.test',
             date_trunc('milliseconds', now() - g * interval '1 second'), now() + interval '2 days'
      from generate_series(1, 20000) g`;
    await database.sql`analyze cases`;

    const now = new Date();
    const cursor = decodeCursor(
      encodeCursor({
        createdAt: new Date(now.getTime() - 10_000_000),
        id: '7f000000-0000-4000-8000-000000000000',
        direction: 'next',
      }),
    );
    const filterSets: ListCasesInput[] = [
      {},
      { status: 'open' },
      { status: 'closed' },
      { status: 'expired' },
      { subject_email: 's7@x.test' },
      { created_after: new Date(now.getTime() - 5_000_000).toISOString() },
      { created_before: new Date(now.getTime() - 5_000_000).toISOString() },
      {
        status: 'open',
        subject_email: 's7@x.test',
        created_after: new Date(now.getTime() - 9_000_000).toISOString(),
      },
    ];
    for (const filters of filterSets) {
      for (const at of [null, cursor, { ...cursor, direction: 'previous' as const }]) {
        const query = listCasesQuery(database.db, listShape(filters, at)).toSQL();
        expect(query.sql.toLowerCase()).not.toContain('offset');
        const [row] = await database.sql.unsafe(
          `explain (format json) ${query.sql}`,
          fillPlaceholders(
            query.params,
            listCasesValues({ teamId: bigTeam, livemode: true }, filters, at, now),
          ) as never[],
        );
        const plan = JSON.stringify((row as Record<string, unknown>)['QUERY PLAN']);
        const label = `${JSON.stringify(filters)} ${at?.direction ?? 'first page'}: ${plan}`;
        expect(plan, label).not.toContain('Seq Scan');
        // Read in index order and stopped after 51 rows. The planner may still sort a set that the
        // index conditions already made small (a narrow date range, one e-mail), but never the
        // team's thousands of rows, which is what an ORDER BY not matching the index causes.
        for (const sorted of sortInputs((row as Record<string, unknown>)['QUERY PLAN'])) {
          expect(sorted, label).toBeLessThan(1000);
        }
        expect(plan, label).toMatch(/"Index Name":"cases_team_(created|status_created|email_created)_idx"/);
        if (at) expect(plan, label).toMatch(/"Index Cond":"[^"]*ROW\(created_at, id\) [<>]/);
      }
    }
  });
});

/** Estimated input rows of every Sort node in an EXPLAIN (FORMAT JSON) plan. */
function sortInputs(explained: unknown): number[] {
  const found: number[] = [];
  const visit = (node: { 'Node Type'?: string; 'Plan Rows'?: number; Plans?: unknown[] }) => {
    if (node['Node Type'] === 'Sort') {
      for (const child of (node.Plans ?? []) as Array<{ 'Plan Rows': number }>)
        found.push(child['Plan Rows']);
    }
    for (const child of node.Plans ?? []) visit(child as typeof node);
  };
  for (const entry of explained as Array<{ Plan: Parameters<typeof visit>[0] }>) visit(entry.Plan);
  return found;
}

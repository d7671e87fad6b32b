import { connectDatabase, migrateDatabase } from '@/db/client';
import { createApiKey } from '@/server/auth/api-keys';

export const TEAM_COUNT = 100;

export interface SeededTeam {
  id: string;
  token: string;
  /** A random sample of this team's case ids, for GET /v1/cases/{id}/. */
  caseIds: string[];
}

export interface SeededDataset {
  url: string;
  caseCount: number;
  teams: SeededTeam[];
  seconds: number;
  /** How long each part of the load took. */
  timings: string[];
}

/**
 * Creates (or recreates) `database` on the server at `adminUrl` and fills it with `caseCount`
 * cases spread evenly over 100 teams, entirely in SQL (generate_series), plus one API key per
 * team made by the app's own createApiKey.
 *
 * Shape of the data, the same at every size so that a 10k and a 1M run compare like with like:
 * within a team, cases are evenly spread over the last 30 days, newest first; every second case is
 * open (expiring in a week, so it stays open during the run), the rest closed, failed or expired.
 * So the first page of `?status=open` is always a full 50 rows. Every case has an `email` step;
 * one in five also `government_id` and `selfie`. Teams' cases are interleaved in the heap, in the
 * order they were created, as they are when teams create cases at the same time; ids are
 * time-ordered as the app's are.
 */
export async function seedDataset(
  adminUrl: string,
  database: string,
  caseCount: number,
): Promise<SeededDataset> {
  const started = performance.now();
  const admin = connectDatabase(adminUrl, { max: 1 });
  await admin.sql.unsafe(`drop database if exists "${database}" with (force)`);
  await admin.sql.unsafe(`create database "${database}"`);
  await admin.close();
  const parsed = new URL(adminUrl);
  parsed.pathname = `/${database}`;
  const url = parsed.toString();
  await migrateDatabase(url);

  const { db, sql, close } = connectDatabase(url, { max: 4 });
  try {
    // Enterprise plan, active, and a large top-up balance: billing never refuses a bench POST.
    await sql`
      insert into teams (name, plan_code, subscription_status, topup_balance_cents, billing_anchor)
      select 'Bench team ' || lpad(n::text, 3, '0'), 'enterprise', 'active', 1000000000, now() - interval '1 day'
      from generate_series(1, ${TEAM_COUNT}) n`;
    const teamRows = await sql<{ id: string }[]>`select id from teams order by name`;
    const keys = await Promise.all(teamRows.map((t) => createApiKey(db, { teamId: t.id, name: 'bench' })));

    const perTeam = Math.ceil(caseCount / TEAM_COUNT);
    const spacingMs = Math.floor((30 * 86_400_000) / perTeam);
    // Bulk load: the plain indexes (not those behind constraints) are dropped first and rebuilt
    // afterwards from their own definitions — one sort each instead of a million inserts into each.
    const timings: string[] = [];
    const step = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const result = await work();
      timings.push(`${name} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      return result;
    };
    const indexes = await sql<{ name: string; definition: string }[]>`
      select indexname as name, indexdef as definition from pg_indexes
      where schemaname = 'public' and tablename in ('cases', 'case_steps')
        and indexname not in (select conname from pg_constraint)`;
    await sql.begin(async (tx) => {
      // The seed's own work, not the app's: a bulk load needs no per-row durability wait.
      await tx`set local synchronous_commit = off`;
      await tx`set local maintenance_work_mem = '256MB'`;
      for (const index of indexes) await tx.unsafe(`drop index "${index.name}"`);
      await step(
        'cases',
        () => tx`
        insert into cases (id, team_id, public_id, status, subject_email, subject_name, notes, failure_reason,
                           created_at, expires_at, updated_at)
        select (lpad(to_hex((extract(epoch from c.created_at) * 1000)::bigint), 12, '0') || '7' ||
                substr(r.hex, 1, 3) || '8' || substr(r.hex, 4, 15))::uuid,
               t.ids[(i % ${TEAM_COUNT}) + 1],
               'bench' || lpad(i::text, 11, '0'),
               s.status,
               'subject' || i || '@bench.example',
               case when i % 3 = 0 then null else 'Subject ' || i end,
               case when i % 7 = 0 then 'Hired via the bench' else '' end,
               case when s.status = 'failed' then 'attempts_exhausted' end,
               c.created_at,
               case when s.status = 'open' then now() + interval '7 days' else c.created_at + interval '48 hours' end,
               c.created_at
        -- Oldest first, as the app appends them, with ids made as the app makes them (newRowId:
        -- UUIDv7, the creation time's milliseconds first), so the table and its indexes are laid
        -- out as a million cases created over 30 days would be.
        from (select n as i from generate_series(${caseCount - 1}::int, 0, -1) n) g
        cross join (select array_agg(id order by name) ids from teams) t
        cross join lateral (select g.i / ${TEAM_COUNT} as k) kk
        cross join lateral (select now() - ((kk.k::bigint * ${spacingMs} + i % ${TEAM_COUNT})::float8) * interval '1 millisecond'
                              as created_at) c
        cross join lateral (select md5(g.i::text || random()::text) as hex) r
        cross join lateral (select case when kk.k % 2 = 0 then 'open'
                                        when kk.k % 10 = 1 then 'failed'
                                        when kk.k % 10 = 3 then 'expired'
                                        else 'closed' end as status) s`,
      );
      await step(
        'steps',
        () => tx`
        insert into case_steps (case_id, method, state, settings, updated_at)
        select id, 'email', case when status = 'closed' then 'verified' else 'pending' end, '{}', created_at
        from cases order by id`,
      );
      await step(
        'more steps',
        () => tx`
        insert into case_steps (case_id, method, state, settings, updated_at)
        select c.id, m.method, 'pending', '{}', c.created_at
        from cases c cross join (values ('government_id'), ('selfie')) m(method)
        where right(c.public_id, 1) in ('0', '5')
        order by c.id`,
      );
      await step('indexes', async () => {
        for (const index of indexes) await tx.unsafe(index.definition);
      });
    });
    // What autovacuum would have done long before a table reached this size in production.
    await step('vacuum', () => sql.unsafe('vacuum analyze cases, case_steps, teams, api_keys'));

    const samplePercent = Math.min(100, (3000 / caseCount) * 100);
    const sample = await sql<{ id: string; team_id: string }[]>`
      select id, team_id from cases tablesample bernoulli (${samplePercent}) repeatable (42)`;
    const byTeam = new Map<string, string[]>();
    for (const row of sample) byTeam.set(row.team_id, [...(byTeam.get(row.team_id) ?? []), row.id]);
    const teams: SeededTeam[] = keys.map((key) => ({
      id: key.teamId,
      token: key.token,
      caseIds: byTeam.get(key.teamId) ?? [],
    }));
    // Every team needs at least one id to ask for.
    for (const team of teams) {
      if (team.caseIds.length === 0) {
        const [row] = await sql<{ id: string }[]>`select id from cases where team_id = ${team.id} limit 1`;
        if (row) team.caseIds.push(row.id);
      }
    }
    return { url, caseCount, teams, seconds: (performance.now() - started) / 1000, timings };
  } finally {
    await close();
  }
}

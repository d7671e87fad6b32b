import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from '@/db/schema';
import { listCases } from '@/server/application/cases/list-cases';
import { findCaseForTeam } from '@/server/cases/case-repository';

export interface ExplainedQuery {
  query: string;
  plan: string[];
  executionMs: number;
}

type Captured = Array<{ query: string; params: unknown[] }>;

/**
 * Where the logger puts what it sees. The app's read statements are built once per process, with
 * the logger of the first handle they ran on (db/reusable-query.ts), so every call's logger must
 * write to the same place; each call points it at its own list.
 */
let capturing: Captured = [];
const logger = { logQuery: (query: string, params: unknown[]) => capturing.push({ query, params }) };

/**
 * EXPLAIN ANALYZE of exactly the SQL the app sends for the two benchmarked reads: the queries are
 * captured from the app's own listCases/findCaseForTeam through drizzle's logger, then explained
 * (twice; the warm second run is kept).
 */
export async function explainReads(url: string, teamId: string, caseId: string): Promise<ExplainedQuery[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'UTC' } });
  const captured: Captured = [];
  capturing = captured;
  const db = drizzle(sql, { schema, logger });
  try {
    await listCases(db, { teamId, livemode: true }, { status: 'open' }, new Date());
    await findCaseForTeam(db, { teamId, livemode: true }, caseId);
    const explained: ExplainedQuery[] = [];
    for (const { query, params } of captured) {
      const run = () =>
        sql.unsafe(`explain (analyze, buffers) ${query}`, params as postgres.ParameterOrJSON<never>[]);
      await run();
      const rows = await run();
      const plan = rows.map((r) => String(r['QUERY PLAN']));
      const execution = plan.find((l) => l.startsWith('Execution Time'));
      explained.push({
        query,
        plan,
        executionMs: Number(execution?.match(/([\d.]+) ms/)?.[1] ?? Number.NaN),
      });
    }
    return explained;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

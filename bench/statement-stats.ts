/**
 * What PostgreSQL spent its time on during a phase of a benchmark (pg_stat_statements, which the
 * server must preload: STATEMENT_STATS_SETTINGS), per request or case of the phase.
 */

/** The settings an embedded server needs for `statementStats`. */
export const STATEMENT_STATS_SETTINGS = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'all',
};

/** Forgets what was counted so far: the next `statementStats` covers what runs from now on. */
export async function resetStatementStats(url: string): Promise<void> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql`create extension if not exists pg_stat_statements`;
  await sql`select pg_stat_statements_reset()`;
  await sql.end();
}

/** The statements since the last reset by total time (planning and execution), per request. */
export async function statementStats(url: string, requests: number): Promise<string> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const rows = await sql<Array<{ calls: string; total: number; query: string }>>`
    select calls::text, total_exec_time + total_plan_time as total, query
    from pg_stat_statements where query not like '%pg_stat_statements%'
    order by total_exec_time + total_plan_time desc limit 25`;
  await sql.end();
  return rows
    .map(
      (r) =>
        `  ${(r.total / requests).toFixed(3).padStart(7)} ms/req  ${(Number(r.calls) / requests).toFixed(2).padStart(5)} calls/req  ${r.query.replace(/\s+/g, ' ').slice(0, 150)}`,
    )
    .join('\n');
}

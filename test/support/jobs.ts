import type { TestDatabase } from './database';

export interface QueuedJob {
  id: string;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  data: Record<string, unknown> | null;
  completedOn: Date | null;
}

/**
 * The jobs pg-boss holds for `queue` (its own table; completed jobs stay there for days), oldest
 * first: the positive signal that a worker ran, where a test would otherwise sleep and hope.
 * Values are converted in SQL: drizzle makes the shared client return dates and JSON as text.
 */
export async function jobsOf(database: TestDatabase, queue: string): Promise<QueuedJob[]> {
  const rows = await database.sql<
    Array<{ id: string; state: QueuedJob['state']; data: string | null; completedMs: number | null }>
  >`
    select id, state::text as state, data::text as data,
           (extract(epoch from completed_on) * 1000)::float8 as "completedMs"
      from pgboss.job where name = ${queue} order by created_on, id`;
  return rows.map((row) => ({
    id: row.id,
    state: row.state,
    data: row.data === null ? null : (JSON.parse(row.data) as Record<string, unknown>),
    completedOn: row.completedMs === null ? null : new Date(Number(row.completedMs)),
  }));
}

/** Jobs still to run (or running): nothing more will happen for them while this is empty. */
export function unfinished(jobs: QueuedJob[]): QueuedJob[] {
  return jobs.filter((job) => job.state === 'created' || job.state === 'retry' || job.state === 'active');
}

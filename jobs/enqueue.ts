import { sql } from 'drizzle-orm';
import { fromDrizzle, type JobInsert, type PgBoss } from 'pg-boss';
import type { Tx } from '@/db/client';
import type { QueueName } from './catalog';

const holder = globalThis as { __vouchBoss?: PgBoss };

export function setJobQueue(boss: PgBoss | undefined): void {
  holder.__vouchBoss = boss;
}

/** The process's pg-boss instance (kept on `globalThis`: route bundles and the web process share it). */
export function jobQueue(): PgBoss {
  if (!holder.__vouchBoss) throw new Error('background jobs are not started in this process');
  return holder.__vouchBoss;
}

/**
 * Queues jobs inside the caller's transaction: they exist exactly when the change that caused
 * them commits, so a crash between commit and send cannot lose one.
 */
export async function enqueueJobs(tx: Tx, queue: QueueName, jobs: JobInsert[]): Promise<void> {
  if (jobs.length === 0) return;
  await jobQueue().insert(queue, jobs, { db: fromDrizzle(tx, sql) });
}

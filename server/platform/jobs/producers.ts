import { sql } from 'drizzle-orm';
import { fromDrizzle, type PgBoss } from 'pg-boss';
import type { Tx } from '@/db/client';
import { type JobPayloads, QUEUES } from './catalog';

const holder = globalThis as { __vouchBoss?: PgBoss };

/**
 * The process's pg-boss instance, set when it starts (job-queue.ts). Kept on `globalThis`, as the
 * runtime is: the route bundles queue jobs through the instance the web process started.
 */
export function setJobQueue(boss: PgBoss | undefined): void {
  holder.__vouchBoss = boss;
}

export function jobQueue(): PgBoss {
  if (!holder.__vouchBoss) throw new Error('background jobs are not started in this process');
  return holder.__vouchBoss;
}

/**
 * Queues jobs inside the caller's transaction: they exist exactly when the change that caused
 * them commits, so a crash between commit and send cannot lose one.
 */
async function enqueue<Q extends typeof QUEUES.webhookDeliver>(
  tx: Tx,
  queue: Q,
  jobs: Array<{ data: JobPayloads[Q]; startAfter?: Date }>,
): Promise<void> {
  if (jobs.length === 0) return;
  await jobQueue().insert(queue, jobs, { db: fromDrizzle(tx, sql) });
}

/** Attempts of webhook deliveries, each at its time (now when none is given). */
export function enqueueWebhookAttempts(
  tx: Tx,
  attempts: Array<{ deliveryId: string; startAfter?: Date }>,
): Promise<void> {
  return enqueue(
    tx,
    QUEUES.webhookDeliver,
    attempts.map(({ deliveryId, startAfter }) => ({
      data: { deliveryId },
      ...(startAfter ? { startAfter } : {}),
    })),
  );
}

export function enqueueWebhookAttempt(
  tx: Tx,
  deliveryId: string,
  options: { startAfter?: Date } = {},
): Promise<void> {
  return enqueueWebhookAttempts(tx, [{ deliveryId, startAfter: options.startAfter }]);
}

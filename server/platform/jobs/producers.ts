import { sql } from 'drizzle-orm';
import { fromDrizzle } from 'pg-boss';
import type { Tx } from '@/db/client';
import { runtime } from '@/server/platform/runtime';
import { type JobPayloads, QUEUES } from './catalog';

/**
 * Queues jobs inside the caller's transaction: they exist exactly when the change that caused
 * them commits, so a crash between commit and send cannot lose one.
 */
async function enqueue<Q extends typeof QUEUES.webhookDeliver | typeof QUEUES.vendorErasure>(
  tx: Tx,
  queue: Q,
  jobs: Array<{ data: JobPayloads[Q]; startAfter?: Date }>,
): Promise<void> {
  if (jobs.length === 0) return;
  const { jobs: queues } = await runtime();
  await queues.insert(queue, jobs, { db: fromDrizzle(tx, sql) });
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

/** The erasure of a redacted case's copies at its vendors (see server/cases/erase-vendor-copies.ts). */
export function enqueueVendorErasure(tx: Tx, caseId: string): Promise<void> {
  return enqueue(tx, QUEUES.vendorErasure, [{ data: { caseId } }]);
}

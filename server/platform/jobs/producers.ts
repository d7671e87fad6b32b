import { sql } from 'drizzle-orm';
import { fromDrizzle, type PgBoss } from 'pg-boss';
import type { Tx } from '@/db/client';
import { type JobPayloads, QUEUES } from './catalog';

/**
 * The typed producers of the jobs a change causes. Each queues its jobs inside the caller's
 * transaction: they exist exactly when the change commits, so a crash between commit and send
 * cannot lose one. Handed to domain and application code as a dependency (the process's entry
 * builds it from its pg-boss instance), never looked up.
 */
export interface JobProducer {
  /** Attempts of webhook deliveries, each at its time (now when none is given). */
  webhookAttempts(tx: Tx, attempts: Array<{ deliveryId: string; startAfter?: Date }>): Promise<void>;
  /** The erasure of a redacted case's copies at its vendors (server/cases/erase-vendor-copies.ts). */
  vendorErasure(tx: Tx, caseId: string): Promise<void>;
  /** The run of a confirmed console import (server/application/case-imports/run-case-import.ts). */
  caseImport(tx: Tx, importId: string): Promise<void>;
}

/** A producer on `queue`: pg-boss inserts through the caller's drizzle transaction. */
export function jobProducer(queue: Pick<PgBoss, 'insert'>): JobProducer {
  async function enqueue<
    Q extends typeof QUEUES.webhookDeliver | typeof QUEUES.vendorErasure | typeof QUEUES.caseImport,
  >(tx: Tx, name: Q, jobs: Array<{ data: JobPayloads[Q]; startAfter?: Date }>): Promise<void> {
    if (jobs.length === 0) return;
    await queue.insert(name, jobs, { db: fromDrizzle(tx, sql) });
  }
  return {
    webhookAttempts: (tx, attempts) =>
      enqueue(
        tx,
        QUEUES.webhookDeliver,
        attempts.map(({ deliveryId, startAfter }) => ({
          data: { deliveryId },
          ...(startAfter ? { startAfter } : {}),
        })),
      ),
    vendorErasure: (tx, caseId) => enqueue(tx, QUEUES.vendorErasure, [{ data: { caseId } }]),
    caseImport: (tx, importId) => enqueue(tx, QUEUES.caseImport, [{ data: { importId } }]),
  };
}

import { and, asc, desc, eq, gt, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { Db, Queryable } from '@/db/client';
import { webhookAttempts, webhookDeliveries } from '@/db/schema';
import { type Cursor, decodeCursor, encodeCursor } from '@/server/cases/cursor';
import type { Clock } from '@/server/platform/clock';
import { AppError } from '@/server/platform/errors';
import { enqueueWebhookAttempt } from '@/server/platform/jobs/producers';
import { isUuid, type ListDeliveriesInput } from './wire';

const PAGE_SIZE = 50;

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** A page of the team's deliveries, newest first, by keyset on (created_at, id) as for cases. */
export async function listDeliveries(db: Db, teamId: string, filters: ListDeliveriesInput) {
  const cursor = filters.cursor ? decodeCursor(filters.cursor) : null;
  const conditions: Array<SQL | undefined> = [eq(webhookDeliveries.teamId, teamId)];
  if (filters.endpoint_id) conditions.push(eq(webhookDeliveries.endpointId, filters.endpoint_id));
  if (filters.status) conditions.push(eq(webhookDeliveries.status, filters.status));
  if (filters.event_type !== undefined) conditions.push(eq(webhookDeliveries.eventType, filters.event_type));
  const walkingBack = cursor?.direction === 'previous';
  if (cursor) {
    const cmp = walkingBack ? gt : lt;
    conditions.push(
      or(
        cmp(webhookDeliveries.createdAt, cursor.createdAt),
        and(eq(webhookDeliveries.createdAt, cursor.createdAt), cmp(webhookDeliveries.id, cursor.id)),
      ),
    );
  }
  const order = walkingBack
    ? [asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id)]
    : [desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)];
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(...order)
    .limit(PAGE_SIZE + 1);
  const hasMore = rows.length > PAGE_SIZE;
  const page = rows.slice(0, PAGE_SIZE);
  if (walkingBack) page.reverse();
  const at = (row: DeliveryRow | undefined, direction: Cursor['direction']) =>
    row ? encodeCursor({ createdAt: row.createdAt, id: row.id, direction }) : null;
  const first = page[0];
  const last = page[page.length - 1];
  return {
    results: page,
    nextCursor: walkingBack || hasMore ? at(last, 'next') : null,
    previousCursor: walkingBack
      ? hasMore
        ? at(first, 'previous')
        : null
      : cursor
        ? at(first, 'previous')
        : null,
  };
}

async function requireDelivery(db: Queryable, teamId: string, id: string) {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.teamId, teamId), eq(webhookDeliveries.id, id)))
    : [];
  if (!row) throw new AppError('NOT_FOUND', 'No webhook delivery with this id.');
  return row;
}

/** A delivery with its attempt log, oldest attempt first. */
/**
 * A delivery with its attempts, read from one snapshot: an attempt and the delivery's summary of
 * it (status, last_error) commit together, and two plain reads could straddle that commit and
 * show an attempt the record does not know of yet.
 */
export async function getDelivery(db: Db, teamId: string, id: string) {
  return db.transaction(
    async (tx) => {
      const delivery = await requireDelivery(tx, teamId, id);
      const attempts = await tx
        .select()
        .from(webhookAttempts)
        .where(eq(webhookAttempts.deliveryId, delivery.id))
        .orderBy(asc(webhookAttempts.attemptNumber), asc(webhookAttempts.startedAt));
      return { delivery, attempts };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/**
 * Sends a failed or dead-lettered delivery again now (same body, same id). A dead-lettered one gets
 * one more attempt (numbered after its last), which dead-letters it again if it fails.
 */
export async function retryDelivery(db: Queryable, teamId: string, id: string, clock: Clock) {
  const delivery = await requireDelivery(db, teamId, id);
  const now = clock();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(webhookDeliveries)
      .set({ status: 'pending', nextAttemptAt: now })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          inArray(webhookDeliveries.status, ['failed', 'dead_letter']),
        ),
      )
      .returning();
    if (!row) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Only failed or dead-lettered deliveries can be retried; this one is ${delivery.status}.`,
      );
    }
    await enqueueWebhookAttempt(tx, row.id);
    return row;
  });
}

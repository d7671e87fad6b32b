import { utc } from '@date-fns/utc';
import { subDays } from 'date-fns';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import type { Db, Queryable } from '@/db/client';
import { webhookAttempts, webhookDeliveries } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { isUuid } from '@/server/platform/ids';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { scheduleEndpointRetries, scheduleRetry } from '@/server/platform/outbox/delivery-state';
import { readKeysetPage } from '@/server/platform/pagination';
import { requireEndpoint } from './manage-endpoints';
import type { ListDeliveriesInput } from './wire';

/** The scope's conditions on the deliveries table: one team, one mode. */
function inScope(scope: DataScope) {
  return and(eq(webhookDeliveries.teamId, scope.teamId), eq(webhookDeliveries.livemode, scope.livemode));
}

/** A page of the team's deliveries in one mode, newest first (server/platform/pagination.ts, as every list). */
export async function listDeliveries(db: Db, scope: DataScope, filters: ListDeliveriesInput) {
  const conditions: Array<SQL | undefined> = [inScope(scope)];
  if (filters.endpoint_id) conditions.push(eq(webhookDeliveries.endpointId, filters.endpoint_id));
  if (filters.status) conditions.push(eq(webhookDeliveries.status, filters.status));
  if (filters.event_type !== undefined) conditions.push(eq(webhookDeliveries.eventType, filters.event_type));
  return readKeysetPage(filters.cursor, webhookDeliveries, ({ after, order, limit }) =>
    db
      .select()
      .from(webhookDeliveries)
      .where(and(...conditions, after))
      .orderBy(...order)
      .limit(limit),
  );
}

/** As requireEndpoint, for deliveries. */
async function requireDelivery(db: Queryable, scope: DataScope, id: string) {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(webhookDeliveries)
        .where(and(inScope(scope), eq(webhookDeliveries.id, id)))
    : [];
  if (!row) {
    throw await notFoundInScope(db, webhookDeliveries, scope, isUuid(id) ? id : null, {
      noun: 'webhook delivery',
    });
  }
  return row;
}

/** A delivery with its attempt log, oldest attempt first. */
/**
 * A delivery with its attempts, read from one snapshot: an attempt and the delivery's summary of
 * it (status, last_error) commit together, and two plain reads could straddle that commit and
 * show an attempt the record does not know of yet.
 */
export async function getDelivery(db: Db, scope: DataScope, id: string) {
  return db.transaction(
    async (tx) => {
      const delivery = await requireDelivery(tx, scope, id);
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
export async function retryDelivery(
  db: Queryable,
  scope: DataScope,
  id: string,
  deps: { clock: Clock; jobs: JobProducer },
) {
  const { clock } = deps;
  const delivery = await requireDelivery(db, scope, id);
  const now = clock();
  return db.transaction(async (tx) => {
    const row = await scheduleRetry(tx, deps.jobs, delivery.id, now);
    if (!row) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Only failed or dead-lettered deliveries can be retried; this one is ${delivery.status}.`,
      );
    }
    return row;
  });
}

/** How far back a recovery may reach. */
export const RECOVERY_WINDOW_DAYS = 7;

/**
 * After an outage at the receiver: one new attempt now for every failed or dead-lettered delivery
 * of the endpoint created since `since` (at most seven days back), as `retryDelivery` does for one.
 */
export async function recoverDeliveries(
  db: Db,
  scope: DataScope,
  endpointId: string,
  since: Date,
  deps: { clock: Clock; jobs: JobProducer },
): Promise<{ queued: number }> {
  const now = deps.clock();
  if (since.getTime() > now.getTime())
    throw new AppError('VALIDATION_ERROR', 'since: must not be in the future');
  if (since < subDays(now, RECOVERY_WINDOW_DAYS, { in: utc })) {
    throw new AppError('VALIDATION_ERROR', `since: at most ${RECOVERY_WINDOW_DAYS} days back`);
  }
  const endpoint = await requireEndpoint(db, scope, endpointId);
  return db.transaction(async (tx) => ({
    queued: await scheduleEndpointRetries(tx, deps.jobs, endpoint.id, since, now),
  }));
}

import { and, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '@/db/client';
import { webhookAttempts, webhookDeliveries } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import { enqueueWebhookAttempt, enqueueWebhookAttempts } from '@/server/platform/jobs/producers';
import { recordEndpointDeadLetter } from './endpoint-health';
import { type PostResult, postWebhook } from './post-webhook';
import { serviceSignature, standardWebhookSignature } from './signature';

/** Attempts per delivery (spec part 6); the last failure makes it `dead_letter`. */
export const MAX_ATTEMPTS = 8;

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  /** Seconds before attempts 2..8 (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_type: string;
  body: string;
  attempt_count: number;
  claim_token: string;
  url: string;
  secret: string;
}

/**
 * Takes the attempt of each due delivery for this worker: a single UPDATE whose row locks make two
 * workers' claims exclusive (the loser re-reads the row, sees the claim and skips it). The claim is
 * a lease: a worker that dies mid-attempt leaves it to expire, and the recovery sweep retries it.
 * Deliveries of a disabled endpoint are not claimed (held), except test pings.
 */
async function claimDeliveries(db: Db, ids: string[], leaseMs: number): Promise<ClaimedDelivery[]> {
  return (await db.execute(sql`
    update webhook_deliveries d
       set claim_token = gen_random_uuid(),
           claimed_until = now() + ${leaseMs} * interval '1 millisecond'
      from webhook_endpoints ep
     where d.id = any(${`{${ids.join(',')}}`}::uuid[])
       and ep.id = d.endpoint_id
       and d.status in ('pending', 'failed')
       and d.next_attempt_at <= now()
       and (d.claimed_until is null or d.claimed_until < now())
       and (ep.is_active or d.event_type = 'ping')
    returning d.id, d.endpoint_id, d.event_type, d.body, d.attempt_count, d.claim_token, ep.url, ep.secret
  `)) as unknown as ClaimedDelivery[];
}

function headersFor(delivery: ClaimedDelivery, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Service-Webhook/1.0',
    'X-Service-Signature': serviceSignature(delivery.secret, delivery.body),
    'X-Service-Event': delivery.event_type,
    'X-Service-Delivery': delivery.id,
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhookSignature(delivery.secret, delivery.id, timestamp, delivery.body),
  };
}

/** Seconds to wait before attempt `attempt + 1`; a short schedule repeats its last step. */
export function retryDelaySeconds(schedule: number[], attempt: number): number {
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 0;
}

interface Outcome {
  delivery: ClaimedDelivery;
  result: PostResult;
  startedAt: Date;
}

/**
 * The hot path, one statement for a whole batch (atomic without a transaction round trip): the
 * deliveries become `success`, their attempts are logged, and their endpoints' failure counts are
 * reset where they were not 0. Fenced by the claim token: a worker whose lease was taken over
 * writes nothing for that delivery.
 */
async function recordSuccesses(db: Db, outcomes: Outcome[]): Promise<void> {
  const rows = outcomes.map(({ delivery, result, startedAt }) => ({
    id: delivery.id,
    token: delivery.claim_token,
    attempt: delivery.attempt_count + 1,
    started_at: startedAt.toISOString(),
    duration_ms: result.durationMs,
    status: result.status,
    body: result.body,
  }));
  await db.execute(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as x(id uuid, token uuid, attempt int, started_at timestamptz, duration_ms int, status int, body text)
    ), done as (
      update webhook_deliveries d
         set status = 'success', attempt_count = i.attempt, last_attempt_at = i.started_at,
             last_response_status = i.status, last_error = null, next_attempt_at = null,
             claim_token = null, claimed_until = null
        from input i
       where d.id = i.id and d.claim_token = i.token
      returning d.id, d.endpoint_id
    ), logged as (
      insert into webhook_attempts (delivery_id, attempt_number, started_at, duration_ms, response_status, response_body)
      select i.id, i.attempt, i.started_at, i.duration_ms, i.status, i.body from input i join done on done.id = i.id
    )
    update webhook_endpoints set consecutive_failures = 0
     where id in (select endpoint_id from done) and consecutive_failures <> 0
  `);
}

/**
 * A failed attempt: the attempt log row, the delivery's new state (failed with its next attempt
 * and job, or dead_letter), and the endpoint's failure count, in one transaction. Fenced by the
 * claim token like a success.
 */
async function recordFailure(
  tx: Tx,
  delivery: ClaimedDelivery,
  result: PostResult,
  startedAt: Date,
  deps: DeliveryDeps,
): Promise<void> {
  const attempt = delivery.attempt_count + 1;
  const now = deps.clock();
  const deadLetter = attempt >= MAX_ATTEMPTS;
  const nextAttemptAt = deadLetter
    ? null
    : new Date(now.getTime() + retryDelaySeconds(deps.retrySchedule, attempt) * 1000);
  const updated = await tx
    .update(webhookDeliveries)
    .set({
      status: deadLetter ? 'dead_letter' : 'failed',
      attemptCount: attempt,
      lastAttemptAt: startedAt,
      lastResponseStatus: result.status,
      lastError: result.error,
      nextAttemptAt,
      claimToken: null,
      claimedUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.claimToken, delivery.claim_token)))
    .returning({ id: webhookDeliveries.id });
  if (updated.length === 0) return;
  await tx.insert(webhookAttempts).values({
    deliveryId: delivery.id,
    attemptNumber: attempt,
    startedAt,
    durationMs: result.durationMs,
    responseStatus: result.status,
    responseBody: result.body,
    error: result.error,
  });
  if (nextAttemptAt) {
    await enqueueWebhookAttempt(tx, delivery.id, { startAfter: nextAttemptAt });
  } else await recordEndpointDeadLetter(tx, delivery.endpoint_id, now);
}

/** Attempts the given deliveries once each (those that are due and not held), concurrently. */
export async function attemptDeliveries(deps: DeliveryDeps, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const claimed = await claimDeliveries(deps.db, ids, deps.timeoutMs + 5000);
  const outcomes = await Promise.all(
    claimed.map(async (delivery): Promise<Outcome> => {
      const startedAt = deps.clock();
      const result = await postWebhook({
        url: delivery.url,
        body: delivery.body,
        headers: headersFor(delivery, startedAt),
        timeoutMs: deps.timeoutMs,
        allowPrivateNetworks: deps.allowPrivateNetworks,
      });
      return { delivery, result, startedAt };
    }),
  );
  // The pg-boss batch completes only when every attempt in it has ended, so writing the
  // successes together delays nothing and costs one statement instead of one per delivery.
  const succeeded = outcomes.filter((o) => o.result.ok);
  const writes = await Promise.allSettled([
    succeeded.length > 0 ? recordSuccesses(deps.db, succeeded) : Promise.resolve(),
    ...outcomes
      .filter((o) => !o.result.ok)
      .map((o) => deps.db.transaction((tx) => recordFailure(tx, o.delivery, o.result, o.startedAt, deps))),
  ]);
  // An outcome that could not be written leaves its claim to expire and be recovered.
  const failed = writes.find((write) => write.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Deliveries whose claim outlived its lease belong to a worker that died mid-attempt: release them
 * and queue a new attempt (at-least-once; the receiver may see the interrupted attempt too).
 */
export async function recoverStalledDeliveries(db: Db): Promise<number> {
  return db.transaction(async (tx) => {
    const released = (await tx.execute(sql`
      update webhook_deliveries
         set claim_token = null, claimed_until = null
       where claimed_until < now() and status in ('pending', 'failed')
      returning id, next_attempt_at
    `)) as unknown as Array<{ id: string; next_attempt_at: Date | string }>;
    await enqueueWebhookAttempts(
      tx,
      released.map((row) => ({ deliveryId: row.id, startAfter: new Date(row.next_attempt_at) })),
    );
    return released.length;
  });
}

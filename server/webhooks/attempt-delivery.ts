import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Db, Tx } from '@/db/client';
import type { Clock } from '@/server/platform/clock';
import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { errorFields, logger } from '@/server/platform/logger';
import { recordDeliveryAttempt, recordDeliveryLag } from '@/server/platform/metrics/instruments';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  recordFailedAttempt,
  recordSuccessfulAttempts,
  releaseExpiredClaims,
  type SuccessfulAttempt,
} from '@/server/platform/outbox/delivery-state';
import { inSpan } from '@/server/platform/tracing';
import { recordEndpointDeadLetter } from './endpoint-health';
import { type PostResult, postWebhook } from './post-webhook';
import { deliveryHeaders } from './signature';

/** How long a claim outlasts an attempt's timeout before the recovery sweep may take it over. */
const LEASE_MARGIN_MS = 5000;

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  jobs: JobProducer;
  /** Seconds before attempts 2..8 (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

/** Seconds to wait before attempt `attempt + 1`; a short schedule repeats its last step. */
export function retryDelaySeconds(schedule: number[], attempt: number): number {
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 0;
}

/** An attempt that ended, its outcome not yet written. */
export interface Outcome {
  delivery: ClaimedDelivery;
  result: PostResult;
  startedAt: Date;
}

/** Deliveries whose attempt's outcome could not be written, with why: their claims are left to expire. */
export type UnwrittenOutcomes = Map<string, unknown>;

/** Successes written together, in one statement (see `recordSuccessfulAttempts`). */
async function writeSuccesses(db: Db, outcomes: Outcome[]): Promise<void> {
  const attempts: SuccessfulAttempt[] = outcomes.map(({ delivery, result, startedAt }) => ({
    id: delivery.id,
    token: delivery.claim_token,
    attempt: delivery.attempt_count + 1,
    started_at: startedAt.toISOString(),
    duration_ms: result.durationMs,
    status: result.status,
    body: result.body,
  }));
  await recordSuccessfulAttempts(db).execute({ attempts: JSON.stringify(attempts) });
}

/**
 * The successes of a batch (up to 50 deliveries of any teams), in one statement. Whatever fails
 * the statement fails every row in it: a value PostgreSQL refuses (receivers' bodies are made
 * storable first, but no other team's delivery should rest on that alone), a deadlock with another
 * batch resetting the same endpoints' failure counts. Then each success is written alone, so only
 * one that cannot be written is left unrecorded, never the rest. While the database is
 * unreachable, none could be: they are not tried one by one.
 */
async function recordSuccesses(db: Db, outcomes: Outcome[], unwritten: UnwrittenOutcomes): Promise<void> {
  if (outcomes.length === 0) return;
  try {
    await writeSuccesses(db, outcomes);
    return;
  } catch (error) {
    if (outcomes.length === 1 || isDatabaseUnavailable(error)) {
      for (const { delivery } of outcomes) unwritten.set(delivery.id, error);
      return;
    }
    logger.warn('a batch of webhook successes could not be written together; writing each alone', {
      deliveries: outcomes.length,
      ...errorFields(error),
    });
  }
  await Promise.all(
    outcomes.map((outcome) =>
      writeSuccesses(db, [outcome]).catch((error: unknown) => {
        unwritten.set(outcome.delivery.id, error);
      }),
    ),
  );
}

/**
 * A failed attempt, in one transaction: the delivery's new state (`recordFailedAttempt`: failed
 * with its next attempt, or dead_letter) and, for a dead letter, the endpoint's failure count.
 */
async function recordFailure(
  tx: Tx,
  delivery: ClaimedDelivery,
  result: PostResult,
  startedAt: Date,
  deps: DeliveryDeps,
): Promise<'failure' | 'dead_letter'> {
  const now = deps.clock();
  const retryAt = new Date(
    now.getTime() + retryDelaySeconds(deps.retrySchedule, delivery.attempt_count + 1) * 1000,
  );
  const state = await recordFailedAttempt(
    tx,
    deps.jobs,
    delivery,
    {
      startedAt,
      durationMs: result.durationMs,
      status: result.status,
      body: result.body,
      error: result.error,
    },
    retryAt,
  );
  if (state === 'dead_letter') {
    await recordEndpointDeadLetter(tx, delivery.endpoint_id, now);
    return 'dead_letter';
  }
  return 'failure';
}

/**
 * Claims the due deliveries among `ids` (those not already claimed or held), each with a lease
 * that outlasts its attempt: a worker that dies mid-attempt leaves the claim to expire, and the
 * recovery sweep sends the delivery again.
 */
export async function claimDeliveries(deps: DeliveryDeps, ids: string[]): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  const at = deps.clock();
  return claimDueDeliveries(deps.db).execute({
    ids: uuidArray(ids),
    at: at.toISOString(),
    leaseUntil: new Date(at.getTime() + deps.timeoutMs + LEASE_MARGIN_MS).toISOString(),
  });
}

/** One claimed delivery's attempt: signed, posted, its outcome returned (never thrown). */
export async function attemptDelivery(deps: DeliveryDeps, delivery: ClaimedDelivery): Promise<Outcome> {
  const startedAt = deps.clock();
  if (delivery.attempt_count === 0) {
    recordDeliveryLag((startedAt.getTime() - new Date(delivery.created_at).getTime()) / 1000);
  }
  // A span per attempt (tracing on): the receiver's host and the answer's status, never the
  // endpoint's path or query (a team may put a secret there) nor the body.
  const target = new URL(delivery.url);
  const result = await inSpan(
    `webhook attempt ${delivery.event_type}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': target.hostname,
        'vouch.webhook.event_type': delivery.event_type,
        'vouch.webhook.attempt': delivery.attempt_count + 1,
      },
    },
    async (span) => {
      const posted = await postWebhook({
        url: delivery.url,
        body: delivery.body,
        headers: deliveryHeaders({
          secret: delivery.secret,
          body: delivery.body,
          eventType: delivery.event_type,
          deliveryId: delivery.id,
          now: startedAt,
        }),
        timeoutMs: deps.timeoutMs,
        allowPrivateNetworks: deps.allowPrivateNetworks,
      });
      if (posted.status !== null) span?.setAttribute('http.response.status_code', posted.status);
      if (span && !posted.ok) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', posted.status === null ? 'no_answer' : String(posted.status));
      }
      return posted;
    },
  );
  return { delivery, result, startedAt };
}

/**
 * Writes the outcomes of ended attempts: the successes together, in one statement (see
 * `recordSuccesses`), each failure in a transaction of its own (it may queue the next attempt and
 * count against its endpoint). Returns the deliveries whose outcome could not be written: each
 * one's claim is left to expire and be recovered (sent again), and no other delivery's record
 * depends on it.
 */
export async function recordOutcomes(deps: DeliveryDeps, outcomes: Outcome[]): Promise<UnwrittenOutcomes> {
  const unwritten: UnwrittenOutcomes = new Map();
  await Promise.all([
    recordSuccesses(
      deps.db,
      outcomes.filter((o) => o.result.ok),
      unwritten,
    ),
    ...outcomes
      .filter((o) => !o.result.ok)
      .map((o) =>
        deps.db
          .transaction((tx) => recordFailure(tx, o.delivery, o.result, o.startedAt, deps))
          .then(recordDeliveryAttempt, (error: unknown) => {
            unwritten.set(o.delivery.id, error);
          }),
      ),
  ]);
  // Counted once written: an outcome left unwritten is attempted again and counted then.
  for (const outcome of outcomes) {
    if (outcome.result.ok && !unwritten.has(outcome.delivery.id)) recordDeliveryAttempt('success');
  }
  return unwritten;
}

/**
 * Attempts the given deliveries once each (those that are due and not held), concurrently, and
 * records their outcomes together once all have ended (see `recordOutcomes`). The worker does the
 * same without waiting for the slowest (`startDeliveryDispatcher`).
 */
export async function attemptDeliveries(deps: DeliveryDeps, ids: string[]): Promise<UnwrittenOutcomes> {
  const claimed = await claimDeliveries(deps, ids);
  const outcomes = await Promise.all(claimed.map((delivery) => attemptDelivery(deps, delivery)));
  return recordOutcomes(deps, outcomes);
}

/**
 * Deliveries whose claim outlived its lease belong to a worker that died mid-attempt: released,
 * each with a new attempt queued (see `releaseExpiredClaims`).
 */
export async function recoverStalledDeliveries(deps: {
  db: Db;
  clock: Clock;
  jobs: JobProducer;
}): Promise<number> {
  return deps.db.transaction((tx) => releaseExpiredClaims(tx, deps.jobs, deps.clock()));
}

/** A uuid[] parameter as PostgreSQL's array text (`{a,b}`): ids are uuids, nothing to quote. */
function uuidArray(ids: string[]): string {
  return `{${ids.join(',')}}`;
}

import { and, eq, gte, inArray, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Tx } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import {
  type DeliveryStatus,
  events,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '@/db/schema';
import { name, names, tableAs } from '@/db/sql-names';
import type { JobProducer } from '@/server/platform/jobs/producers';

/**
 * A webhook delivery's state machine: every write to `webhook_deliveries` is one of the
 * transitions below, as every write to a case is one of case-state's. A delivery is born
 * `pending` (fan-out, a test ping), is claimed by one worker for one attempt (a lease held through
 * `claim_token` until `claimed_until`), and the attempt ends it `success`, or `failed` with its
 * next attempt scheduled, or `dead_letter` after MAX_ATTEMPTS. A claim whose lease ran out is
 * released (its worker died); a `failed` or `dead_letter` delivery is sent again on request
 * (retry, recovery); a redacted case's copies are erased in place. Transitions that schedule an
 * attempt queue its job in the same transaction (the outbox's guarantee: nothing is lost on a
 * crash after commit). Every time compared or set comes in from the caller's clock, never the
 * database's `now()`: the schedule is written from the same clock, so the two agree when a test
 * moves time. The hot statements are built once per process (`reusableQuery`); `d` and `ep` are
 * aliases.
 */

/** Attempts per delivery: the first and seven retries; the last failure makes it `dead_letter`. */
export const MAX_ATTEMPTS = 8;

const delivery = alias(webhookDeliveries, 'd');
const endpoint = alias(webhookEndpoints, 'ep');

/** The states a delivery waits in: due for an attempt, now or at `next_attempt_at`. */
const WAITING: DeliveryStatus[] = ['pending', 'failed'];
/** The states a delivery can be sent again from, on request. */
const RETRIABLE: DeliveryStatus[] = ['failed', 'dead_letter'];

/**
 * Born, from the outbox: one `pending` delivery per endpoint of each event's team and mode
 * subscribed to its type. `events` is a JSON array of `FanOutRow` (one JSON parameter, so the text
 * is the same for one event and for thousands). An endpoint the service disabled still gets its
 * deliveries, held as pending; one its team switched off gets none. As one CTE body (of the
 * outbox's statement below, or of a creation's writes): returns each delivery's id and endpoint,
 * for `activeDeliveriesOf`. `ids`, a JSON array of `PlannedDelivery`, names the ids the caller
 * chose for some of them (those whose jobs it queued first, in the same transaction), taken only
 * for an endpoint still active: a delivery held for an endpoint the service disabled meanwhile
 * gets the column's default like the others, so the job queued for it finds no delivery.
 */
export function fanOutFrom(events: SQL, ids: SQL = sql`'[]'::jsonb`): SQL {
  return sql`
    insert into ${webhookDeliveries} (${names(
      webhookDeliveries.id,
      webhookDeliveries.teamId,
      webhookDeliveries.livemode,
      webhookDeliveries.endpointId,
      webhookDeliveries.eventId,
      webhookDeliveries.eventType,
      webhookDeliveries.body,
      webhookDeliveries.nextAttemptAt,
      webhookDeliveries.createdAt,
    )})
    select coalesce(given.id, gen_random_uuid()), e.team_id, e.livemode, ${endpoint.id}, e.event_id, e.type,
           e.body, e.created_at, e.created_at
    from jsonb_to_recordset(${events})
      as e(event_id uuid, team_id uuid, livemode boolean, type text, body text, created_at timestamptz)
    join ${tableAs(webhookEndpoints, endpoint)}
      on ${endpoint.teamId} = e.team_id
     and ${endpoint.livemode} = e.livemode
     and e.type = any(${endpoint.events})
     and (${endpoint.isActive} or ${endpoint.disabledAt} is not null)
    left join jsonb_to_recordset(${ids}) as given(id uuid, event_id uuid, endpoint_id uuid)
      on given.event_id = e.event_id and given.endpoint_id = ${endpoint.id} and ${endpoint.isActive}
    returning ${names(webhookDeliveries.id, webhookDeliveries.endpointId)}
  `;
}

/**
 * The endpoints an event of `type` in the team's mode would get a delivery to attempt at once from
 * (active, subscribed to it), as `fanOutFrom` and `activeDeliveriesOf` would decide it: each such
 * delivery needs its job in the event's commit. A JSON array of ids, empty when there is none.
 */
export function endpointsAwaiting(params: { teamId: SQL; livemode: SQL; type: SQL }): SQL {
  return sql`to_jsonb(array(
    select ${endpoint.id} from ${tableAs(webhookEndpoints, endpoint)}
    where ${endpoint.teamId} = ${params.teamId} and ${endpoint.livemode} = ${params.livemode}
      and ${params.type} = any(${endpoint.events}) and ${endpoint.isActive}
    order by ${endpoint.id}
  ))`;
}

/** A delivery whose id its caller chose before the fan-out (`fanOutFrom`'s `ids`). */
export interface PlannedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
}

/** An event as `fanOutFrom` reads it. */
export interface FanOutRow {
  event_id: string;
  team_id: string;
  livemode: boolean;
  type: string;
  body: string;
  created_at: string;
}

/**
 * The ids of the deliveries `fanOutFrom` wrote (the CTE named `born`) whose endpoint is active:
 * the ones to attempt now, each of which needs its job.
 */
export function activeDeliveriesOf(born: SQL): SQL {
  return sql`
    select born.${name(webhookDeliveries.id)} from ${born} born
    join ${tableAs(webhookEndpoints, endpoint)} on ${endpoint.id} = born.${name(webhookDeliveries.endpointId)}
    where ${endpoint.isActive}
  `;
}

/** The outbox's fan-out as a statement of its own, built once: the active deliveries' ids. */
export const createDeliveries = reusableQuery((db) =>
  prepareSql<{ id: string }>(
    db,
    sql`
      with born as (${fanOutFrom(sql`${sql.placeholder('events')}::jsonb`)})
      ${activeDeliveriesOf(sql`born`)}
    `,
    'fan_out_events',
  ),
);

/** Born, for a test ping: one delivery to one endpoint, attempted now even if it is disabled. */
export async function createPingDelivery(
  tx: Tx,
  jobs: JobProducer,
  ping: { teamId: string; livemode: boolean; endpointId: string; eventId: string; body: string; now: Date },
) {
  const [row] = await tx
    .insert(webhookDeliveries)
    .values({
      teamId: ping.teamId,
      livemode: ping.livemode,
      endpointId: ping.endpointId,
      eventId: ping.eventId,
      eventType: 'ping',
      body: ping.body,
      nextAttemptAt: ping.now,
      createdAt: ping.now,
    })
    .returning();
  if (!row) throw new Error('delivery insert returned nothing');
  await jobs.webhookAttempts(tx, [{ deliveryId: row.id }]);
  return row;
}

/** A delivery this worker claimed, with what an attempt needs to send it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_type: string;
  body: string;
  attempt_count: number;
  claim_token: string;
  url: string;
  secret: string;
  /** When its event committed (the delivery is made in the event's transaction). */
  created_at: Date;
}

/**
 * Claimed for an attempt: each given delivery that is due, for this worker, in a single UPDATE
 * whose row locks make two workers' claims exclusive (the loser re-reads the row, sees the claim
 * and skips it). The claim is a lease until `leaseUntil`: a worker that dies mid-attempt leaves it
 * to expire, and `releaseExpiredClaims` takes it back. Deliveries of a disabled endpoint are not
 * claimed (held), except test pings. `ids` is a uuid[] in PostgreSQL's array text.
 */
export const claimDueDeliveries = reusableQuery((db) =>
  prepareSql<ClaimedDelivery>(
    db,
    sql`
      update ${tableAs(webhookDeliveries, delivery)}
         set ${name(webhookDeliveries.claimToken)} = gen_random_uuid(),
             ${name(webhookDeliveries.claimedUntil)} = ${sql.placeholder('leaseUntil')}::timestamptz
        from ${tableAs(webhookEndpoints, endpoint)}
       where ${delivery.id} = any(${sql.placeholder('ids')}::uuid[])
         and ${endpoint.id} = ${delivery.endpointId}
         and ${delivery.status} in ('pending', 'failed')
         and ${delivery.nextAttemptAt} <= ${sql.placeholder('at')}::timestamptz
         and (${delivery.claimedUntil} is null or ${delivery.claimedUntil} < ${sql.placeholder('at')}::timestamptz)
         and (${endpoint.isActive} or ${delivery.eventType} = 'ping')
      returning ${delivery.id}, ${delivery.endpointId}, ${delivery.eventType}, ${delivery.body}, ${delivery.attemptCount},
                ${delivery.claimToken}, ${endpoint.url}, ${endpoint.secret}, ${delivery.createdAt}
    `,
    'claim_due_deliveries',
  ),
);

/** One successful attempt, as `recordSuccessfulAttempts` takes it (in a JSON array). */
export interface SuccessfulAttempt {
  id: string;
  token: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status: number | null;
  body: string | null;
}

/**
 * Attempted, successfully: a batch in one statement (atomic without a transaction round trip).
 * The deliveries become `success`, their attempts are logged, and their endpoints' failure counts
 * are reset where they were not 0. Fenced by the claim token: a worker whose lease was taken over
 * writes nothing for that delivery.
 */
export const recordSuccessfulAttempts = reusableQuery((db) =>
  prepareSql(
    db,
    sql`
      with input as (
        select * from jsonb_to_recordset(${sql.placeholder('attempts')}::jsonb)
          as x(id uuid, token uuid, attempt int, started_at timestamptz, duration_ms int, status int, body text)
      ), done as (
        update ${tableAs(webhookDeliveries, delivery)}
           set ${name(webhookDeliveries.status)} = 'success', ${name(webhookDeliveries.attemptCount)} = i.attempt,
               ${name(webhookDeliveries.lastAttemptAt)} = i.started_at,
               ${name(webhookDeliveries.lastResponseStatus)} = i.status, ${name(webhookDeliveries.lastError)} = null,
               ${name(webhookDeliveries.nextAttemptAt)} = null, ${name(webhookDeliveries.claimToken)} = null,
               ${name(webhookDeliveries.claimedUntil)} = null
          from input i
         where ${delivery.id} = i.id and ${delivery.claimToken} = i.token
        returning ${delivery.id}, ${delivery.endpointId}
      ), logged as (
        insert into ${webhookAttempts} (${names(
          webhookAttempts.deliveryId,
          webhookAttempts.attemptNumber,
          webhookAttempts.startedAt,
          webhookAttempts.durationMs,
          webhookAttempts.responseStatus,
          webhookAttempts.responseBody,
        )})
        select i.id, i.attempt, i.started_at, i.duration_ms, i.status, i.body
          from input i join done on done.${name(webhookDeliveries.id)} = i.id
      )
      update ${webhookEndpoints} set ${name(webhookEndpoints.consecutiveFailures)} = 0
       where ${webhookEndpoints.id} in (select ${name(webhookDeliveries.endpointId)} from done)
         and ${webhookEndpoints.consecutiveFailures} <> 0
    `,
    'record_successful_attempts',
  ),
);

/** What an attempt that failed sent and received, for `recordFailedAttempt`. */
export interface FailedAttempt {
  startedAt: Date;
  durationMs: number;
  status: number | null;
  body: string | null;
  error: string | null;
}

/**
 * Attempted, and failed: the delivery becomes `failed` with its next attempt at `retryAt` (and
 * its job queued), or `dead_letter` once it has had MAX_ATTEMPTS, and the attempt is logged.
 * Fenced by the claim token like a success: `stale` when the claim was taken over (nothing
 * written). The endpoint's health is its caller's (a dead letter counts against it).
 */
export async function recordFailedAttempt(
  tx: Tx,
  jobs: JobProducer,
  claimed: Pick<ClaimedDelivery, 'id' | 'claim_token' | 'attempt_count'>,
  attempt: FailedAttempt,
  retryAt: Date,
): Promise<'stale' | 'failed' | 'dead_letter'> {
  const number = claimed.attempt_count + 1;
  const deadLetter = number >= MAX_ATTEMPTS;
  const updated = await tx
    .update(webhookDeliveries)
    .set({
      status: deadLetter ? 'dead_letter' : 'failed',
      attemptCount: number,
      lastAttemptAt: attempt.startedAt,
      lastResponseStatus: attempt.status,
      lastError: attempt.error,
      nextAttemptAt: deadLetter ? null : retryAt,
      claimToken: null,
      claimedUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, claimed.id), eq(webhookDeliveries.claimToken, claimed.claim_token)))
    .returning({ id: webhookDeliveries.id });
  if (updated.length === 0) return 'stale';
  await tx.insert(webhookAttempts).values({
    deliveryId: claimed.id,
    attemptNumber: number,
    startedAt: attempt.startedAt,
    durationMs: attempt.durationMs,
    responseStatus: attempt.status,
    responseBody: attempt.body,
    error: attempt.error,
  });
  if (deadLetter) return 'dead_letter';
  await jobs.webhookAttempts(tx, [{ deliveryId: claimed.id, startAfter: retryAt }]);
  return 'failed';
}

const releaseClaims = reusableQuery((db) =>
  prepareSql<{ id: string; next_attempt_at: string }>(
    db,
    sql`
      update ${webhookDeliveries}
         set ${name(webhookDeliveries.claimToken)} = null, ${name(webhookDeliveries.claimedUntil)} = null
       where ${webhookDeliveries.claimedUntil} < ${sql.placeholder('at')}::timestamptz
         and ${webhookDeliveries.status} in ('pending', 'failed')
      returning ${webhookDeliveries.id}, ${webhookDeliveries.nextAttemptAt}
    `,
    'release_expired_claims',
  ),
);

/**
 * Released: claims whose lease ended before `at` belong to a worker that died mid-attempt. Each
 * gets its attempt queued again, when it is due (at-least-once: the receiver may see the
 * interrupted attempt too). Returns how many were released.
 */
export async function releaseExpiredClaims(tx: Tx, jobs: JobProducer, at: Date): Promise<number> {
  const released = await releaseClaims(tx).execute({ at: at.toISOString() });
  await jobs.webhookAttempts(
    tx,
    released.map((row) => ({ deliveryId: row.id, startAfter: new Date(row.next_attempt_at) })),
  );
  return released.length;
}

/**
 * Sent again on request: a `failed` or `dead_letter` delivery back to `pending`, due now, its
 * attempt queued (same body, same id; a dead-lettered one gets one more attempt, numbered after
 * its last). Null when the delivery is in no state to be retried.
 */
export async function scheduleRetry(tx: Tx, jobs: JobProducer, id: string, now: Date) {
  const [row] = await tx
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now })
    .where(and(eq(webhookDeliveries.id, id), inArray(webhookDeliveries.status, RETRIABLE)))
    .returning();
  if (row) await jobs.webhookAttempts(tx, [{ deliveryId: row.id }]);
  return row ?? null;
}

/** Sent again after a receiver's outage: `scheduleRetry` for each of the endpoint's since `since`. */
export async function scheduleEndpointRetries(
  tx: Tx,
  jobs: JobProducer,
  endpointId: string,
  since: Date,
  now: Date,
): Promise<number> {
  const rows = await tx
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now })
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        inArray(webhookDeliveries.status, RETRIABLE),
        gte(webhookDeliveries.createdAt, since),
      ),
    )
    .returning({ id: webhookDeliveries.id });
  await jobs.webhookAttempts(
    tx,
    rows.map((row) => ({ deliveryId: row.id })),
  );
  return rows.length;
}

/**
 * Held deliveries resumed, when their endpoint is reactivated: each waiting delivery not being
 * attempted gets its attempt queued, when it is due (now at the earliest). Their rows do not
 * change: a held delivery is a waiting one whose endpoint is inactive.
 */
export async function resumeHeldDeliveries(
  tx: Tx,
  jobs: JobProducer,
  endpointId: string,
  now: Date,
): Promise<void> {
  const held = await tx
    .select({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        inArray(webhookDeliveries.status, WAITING),
        isNull(webhookDeliveries.claimedUntil),
      ),
    );
  await jobs.webhookAttempts(
    tx,
    held.map((d) => ({
      deliveryId: d.id,
      startAfter: d.nextAttemptAt && d.nextAttemptAt > now ? d.nextAttemptAt : now,
    })),
  );
}

/**
 * Erased, with their case: the deliveries of a redacted case's events keep their state, but their
 * bodies lose the personal values (`erase` rewrites the body's text), and what receivers answered
 * and errors (which may quote a receiver, echo the body in any form) are replaced whole by
 * `erased`. An attempt in flight sent the body as it was, and would log the receiver's answer
 * after this commits: its claim is voided, so it writes nothing (attempts are fenced by their
 * claim token), and once its lease ends `releaseExpiredClaims` sends the redacted body again.
 */
export async function eraseCaseDeliveries(
  tx: Tx,
  caseId: string,
  erase: (body: SQL) => SQL,
  erased: string,
): Promise<void> {
  const caseEvents = tx.select({ id: events.id }).from(events).where(eq(events.caseId, caseId));
  await tx
    .update(webhookDeliveries)
    .set({ body: erase(sql`${webhookDeliveries.body}`) })
    .where(inArray(webhookDeliveries.eventId, caseEvents));
  const caseDeliveries = tx
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(inArray(webhookDeliveries.eventId, caseEvents));
  await tx
    .update(webhookAttempts)
    .set({
      responseBody: sql`case when ${webhookAttempts.responseBody} is null then null else ${erased} end`,
      error: sql`case when ${webhookAttempts.error} is null then null else ${erased} end`,
    })
    .where(inArray(webhookAttempts.deliveryId, caseDeliveries));
  await tx
    .update(webhookDeliveries)
    .set({ lastError: erased })
    .where(and(inArray(webhookDeliveries.id, caseDeliveries), isNotNull(webhookDeliveries.lastError)));
  await tx
    .update(webhookDeliveries)
    .set({ claimToken: null })
    .where(and(inArray(webhookDeliveries.id, caseDeliveries), isNotNull(webhookDeliveries.claimToken)));
}

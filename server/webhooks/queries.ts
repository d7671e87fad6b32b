import { sql } from 'drizzle-orm';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '@/db/schema';

/**
 * The delivery worker's hot statements, each built once per process (`reusableQuery`). Every time
 * they compare or set comes in as `at`, the clock's instant, never the database's `now()`: the
 * schedule (`next_attempt_at`) is written from the same clock, so the two agree even when a test
 * moves time. Table and column names come from the schema (`d`, `ep`: aliases).
 */

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
}

/**
 * Takes the attempt of each due delivery for this worker: a single UPDATE whose row locks make two
 * workers' claims exclusive (the loser re-reads the row, sees the claim and skips it). The claim is
 * a lease until `leaseUntil`: a worker that dies mid-attempt leaves it to expire, and the recovery
 * sweep retries it. Deliveries of a disabled endpoint are not claimed (held), except test pings.
 */
export const claimDueDeliveries = reusableQuery((db) =>
  prepareSql<ClaimedDelivery>(
    db,
    sql`
      update ${webhookDeliveries} d
         set claim_token = gen_random_uuid(), claimed_until = ${sql.placeholder('leaseUntil')}::timestamptz
        from ${webhookEndpoints} ep
       where d.id = any(${sql.placeholder('ids')}::uuid[])
         and ep.id = d.endpoint_id
         and d.status in ('pending', 'failed')
         and d.next_attempt_at <= ${sql.placeholder('at')}::timestamptz
         and (d.claimed_until is null or d.claimed_until < ${sql.placeholder('at')}::timestamptz)
         and (ep.is_active or d.event_type = 'ping')
      returning d.id, d.endpoint_id, d.event_type, d.body, d.attempt_count, d.claim_token, ep.url, ep.secret
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
 * A batch of successes in one statement (atomic without a transaction round trip): the deliveries
 * become `success`, their attempts are logged, and their endpoints' failure counts are reset where
 * they were not 0. Fenced by the claim token: a worker whose lease was taken over writes nothing
 * for that delivery.
 */
export const recordSuccessfulAttempts = reusableQuery((db) =>
  prepareSql(
    db,
    sql`
      with input as (
        select * from jsonb_to_recordset(${sql.placeholder('attempts')}::jsonb)
          as x(id uuid, token uuid, attempt int, started_at timestamptz, duration_ms int, status int, body text)
      ), done as (
        update ${webhookDeliveries} d
           set status = 'success', attempt_count = i.attempt, last_attempt_at = i.started_at,
               last_response_status = i.status, last_error = null, next_attempt_at = null,
               claim_token = null, claimed_until = null
          from input i
         where d.id = i.id and d.claim_token = i.token
        returning d.id, d.endpoint_id
      ), logged as (
        insert into ${webhookAttempts} (delivery_id, attempt_number, started_at, duration_ms, response_status, response_body)
        select i.id, i.attempt, i.started_at, i.duration_ms, i.status, i.body from input i join done on done.id = i.id
      )
      update ${webhookEndpoints} set consecutive_failures = 0
       where id in (select endpoint_id from done) and consecutive_failures <> 0
    `,
    'record_successful_attempts',
  ),
);

/** Claims whose lease ended before `at`, released; each row says when its attempt is due. */
export const releaseExpiredClaims = reusableQuery((db) =>
  prepareSql<{ id: string; next_attempt_at: string }>(
    db,
    sql`
      update ${webhookDeliveries}
         set claim_token = null, claimed_until = null
       where claimed_until < ${sql.placeholder('at')}::timestamptz and status in ('pending', 'failed')
      returning id, next_attempt_at
    `,
    'release_expired_claims',
  ),
);

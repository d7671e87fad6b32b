import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { events } from './events';
import { teams } from './teams';
import { DELIVERY_STATUSES, type DeliveryStatus, oneOf } from './values';

/**
 * A team's webhook destination. `is_active` false with `disabled_at` set means the service disabled
 * it after 15 dead-lettered deliveries in a row; its deliveries are then held until reactivation.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    description: text('description').notNull().default(''),
    /** `whsec_…`, kept in clear: the service must compute HMACs with it on every delivery. */
    secret: text('secret').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    disabledAt: timestamptz('disabled_at'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // Fan-out reads a team's endpoints on every event; the console lists them by age.
  (t) => [index('webhook_endpoints_team_idx').on(t.teamId, t.livemode, t.createdAt)],
);

/**
 * One event to one endpoint, with its attempt series. `body` holds the exact bytes sent (and
 * signed) on every attempt. A worker owns an attempt through `claim_token` until `claimed_until`;
 * a claim that outlives its lease belongs to a worker that died, and the recovery sweep retries it.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    eventType: text('event_type').notNull(),
    body: text('body').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: timestamptz('next_attempt_at'),
    lastAttemptAt: timestamptz('last_attempt_at'),
    lastResponseStatus: integer('last_response_status'),
    lastError: text('last_error'),
    claimToken: uuid('claim_token'),
    claimedUntil: timestamptz('claimed_until'),
    createdAt: createdAt(),
  },
  (t) => [
    check('webhook_deliveries_status_check', oneOf(t.status, DELIVERY_STATUSES)),
    // The delivery log: newest first per team, optionally per endpoint (keyset on created_at, id).
    index('webhook_deliveries_team_created_idx').on(t.teamId, t.livemode, t.createdAt.desc(), t.id.desc()),
    index('webhook_deliveries_endpoint_created_idx').on(t.endpointId, t.createdAt.desc(), t.id.desc()),
    // The recovery sweep looks only at claims still held, which are few at any moment.
    index('webhook_deliveries_claimed_idx').on(t.claimedUntil).where(sql`${t.claimedUntil} is not null`),
    // An event's deliveries: rewritten when its case is redacted, deleted (cascade) when events
    // pass their retention; without it each event would scan every delivery.
    index('webhook_deliveries_event_idx').on(t.eventId),
    // Reactivation resumes an endpoint's held deliveries.
    index('webhook_deliveries_endpoint_open_idx')
      .on(t.endpointId)
      .where(sql`${t.status} in ('pending', 'failed')`),
  ],
);

/** Every attempt of a delivery, as the API's attempt log shows it. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: primaryUuid(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attemptNumber: integer('attempt_number').notNull(),
    startedAt: timestamptz('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    responseStatus: integer('response_status'),
    /** The first 2 KB of the response body. */
    responseBody: text('response_body'),
    error: text('error'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attemptNumber)],
);

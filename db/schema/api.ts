import { sql } from 'drizzle-orm';
import {
  bigint,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, livemode, timestamptz } from './columns';
import { teams } from './teams';

/**
 * Idempotency records for POST requests, one per (team, key). The primary key is what makes two
 * concurrent requests with the same key safe: only one insert wins.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** Live and test requests keep their keys apart: the same key in both modes is two keys. */
    livemode: livemode(),
    key: text('key').notNull(),
    /** Which operation the key was used for, so a key cannot be replayed against another route. */
    operation: text('operation').notNull(),
    /**
     * HMAC-SHA-256 of the canonical request body keyed with the team's secret (team_secrets): the
     * same key with another body is refused. Null once erased: by the case's redaction, or for a
     * record kept from before hashes were keyed.
     */
    requestHash: text('request_hash'),
    responseStatus: integer('response_status'),
    /** The answer replayed; null while the first request runs, and once its case is redacted. */
    responseBody: jsonb('response_body'),
    /** The case the request created, so that its redaction finds the record. */
    caseId: uuid('case_id'),
    /**
     * The cases a batch created: the redaction of any of them scrubs that person's values from the
     * stored answer (the other items' answers stay replayable).
     */
    caseIds: uuid('case_ids').array(),
    /** Set while the first request runs; a crashed request's lock is taken over once stale. */
    lockedAt: timestamptz('locked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.livemode, t.key] }),
    // The daily clean-up deletes keys older than 30 days.
    index('idempotency_keys_created_idx').on(t.createdAt),
    // A case's redaction erases its record.
    index('idempotency_keys_case_idx').on(t.caseId).where(sql`${t.caseId} is not null`),
    index('idempotency_keys_batch_cases_idx').using('gin', t.caseIds).where(sql`${t.caseIds} is not null`),
  ],
);

/**
 * Usage of one method in one billing period. Rows are created on first use; the team row lock
 * taken by case creation serialises updates to them.
 */
export const usageCounters = pgTable(
  'usage_counters',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    periodStart: timestamptz('period_start').notNull(),
    method: text('method').notNull(),
    includedUsed: integer('included_used').notNull().default(0),
    topupUsed: integer('topup_used').notNull().default(0),
    topupCostCents: bigint('topup_cost_cents', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.periodStart, t.method] })],
);

/**
 * Rate-limit state shared by every app process, in the shape rate-limiter-flexible's drizzle
 * store expects (key, points, expire).
 */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  points: integer('points').notNull().default(0),
  expire: timestamp('expire', { withTimezone: true, mode: 'date' }),
});

import { sql } from 'drizzle-orm';
import { reusableQuery } from '@/db/reusable-query';
import { rateLimits } from '@/db/schema';

// Stryker disable next-line StringLiteral: equivalent; the name only labels the statement each connection prepares once.
const STATEMENT_NAME = 'consume_rate_limit';

/**
 * One request's points added to its counter, or a new window started if the old one expired: every
 * rate-limited request runs it, so it is built once per process (`reusableQuery`).
 */
export const consumePoints = reusableQuery((db) => {
  const expired = sql`${rateLimits.expire} <= ${sql.placeholder('nowIso')}::timestamptz`;
  return db
    .insert(rateLimits)
    .values({
      key: sql.placeholder('key'),
      points: sql.placeholder('points'),
      expire: sql.placeholder('expire'),
    })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        points: sql`CASE WHEN ${expired} THEN ${sql.placeholder('points')}::integer ELSE ${rateLimits.points} + ${sql.placeholder('points')}::integer END`,
        expire: sql`CASE WHEN ${expired} THEN ${sql.placeholder('expireIso')}::timestamptz ELSE ${rateLimits.expire} END`,
      },
    })
    .returning()
    .prepare(STATEMENT_NAME);
});

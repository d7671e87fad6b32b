import { sql } from 'drizzle-orm';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { apiKeys, rateLimits, teams } from '@/db/schema';
import { budgetKeySql } from '@/server/platform/data-scope';

/**
 * The auth domain's hot statements, each built once per process (`reusableQuery`): drizzle spent
 * more CPU building them than PostgreSQL spent running them.
 */

/** A key found by `keyLookupSpending`, and the counter its team's budget left (timestamps as text). */
export interface KeySpendingRow {
  id: string;
  team_id: string;
  livemode: boolean;
  last_used_at: string | null;
  /** The team's own budgets (null: the configured defaults). */
  rate_limit_read: number | null;
  rate_limit_write: number | null;
  /** The counter spent: its stored key, points in the window, and the window's end. */
  spent_key: string;
  spent_points: number;
  spent_expire: string;
}

/**
 * Runs on every API request, built once: the key looked up (with its team's budgets) and one
 * point of the team's budget spent, in one round trip. The spend is the rate limiter's own upsert
 * (server/rate-limits/queries.ts), keyed as the limiter keys it (`keyPrefix` and budgetKey), and
 * made only for a key that exists and is not revoked. It runs where the limiter's counters are
 * written (their pool, which does not wait for the WAL flush on commit).
 */
export const keyLookupSpending = reusableQuery((db) =>
  prepareSql<KeySpendingRow>(
    db,
    sql`
      with found as (
        select ${apiKeys.id} as id, ${apiKeys.teamId} as team_id, ${apiKeys.livemode} as livemode,
          ${apiKeys.lastUsedAt} as last_used_at,
          ${teams.rateLimitReadPerMinute} as rate_limit_read,
          ${teams.rateLimitWritePerMinute} as rate_limit_write
        from ${apiKeys} inner join ${teams} on ${teams.id} = ${apiKeys.teamId}
        where ${apiKeys.keyHash} = ${sql.placeholder('keyHash')} and ${apiKeys.revokedAt} is null
        limit 1
      ), spent as (
        insert into ${rateLimits} (key, points, expire)
        select ${sql.placeholder('keyPrefix')}::text || ${budgetKeySql(sql.raw('found.team_id'), sql.raw('found.livemode'))},
          1, ${sql.placeholder('expireIso')}::timestamptz
        from found
        on conflict (key) do update set
          points = case when ${rateLimits.expire} <= ${sql.placeholder('nowIso')}::timestamptz
            then 1 else ${rateLimits.points} + 1 end,
          expire = case when ${rateLimits.expire} <= ${sql.placeholder('nowIso')}::timestamptz
            then ${sql.placeholder('expireIso')}::timestamptz else ${rateLimits.expire} end
        returning key, points, expire
      )
      select found.*, spent.key as spent_key, spent.points as spent_points, spent.expire as spent_expire
      from found cross join spent
    `,
    // Stryker disable next-line StringLiteral: equivalent; the name only labels the statement each connection prepares once.
    'api_key_spending',
  ),
);

import { and, eq, isNull, sql } from 'drizzle-orm';
import { reusableQuery } from '@/db/reusable-query';
import { apiKeys, teams } from '@/db/schema';

/**
 * The auth domain's hot statements, each built once per process (`reusableQuery`): drizzle spent
 * more CPU building them than PostgreSQL spent running them.
 */

/** Runs on every API request: built once. */
export const keyLookup = reusableQuery((db) =>
  db
    .select({
      id: apiKeys.id,
      teamId: apiKeys.teamId,
      livemode: apiKeys.livemode,
      lastUsedAt: apiKeys.lastUsedAt,
      // The team's own budgets, in the same round trip (null: the configured defaults).
      rateLimitRead: teams.rateLimitReadPerMinute,
      rateLimitWrite: teams.rateLimitWritePerMinute,
    })
    .from(apiKeys)
    .innerJoin(teams, eq(teams.id, apiKeys.teamId))
    .where(and(eq(apiKeys.keyHash, sql.placeholder('keyHash')), isNull(apiKeys.revokedAt)))
    .limit(1)
    .prepare('api_key_by_hash'),
);

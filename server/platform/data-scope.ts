import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';

/**
 * The data a caller works in: one team's, in one mode. A live key, a test key, and the console by
 * its live/test switch each act within one. Every query of cases, events, webhook endpoints and
 * deliveries filters on both, so the other mode's rows answer 404 and are never listed.
 */
export interface DataScope {
  teamId: string;
  livemode: boolean;
}

/** The name of a mode, as keys (`vouch_live_…`, `vouch_test_…`), the CLI and the console say it. */
export type Mode = 'live' | 'test';

export function modeOf(livemode: boolean): Mode {
  return livemode ? 'live' : 'test';
}

/**
 * What a scope's per-team budgets (rate limits) are counted under: live traffic keeps the team's
 * own key, test traffic has budgets of its own, so a test suite never slows production down.
 */
export function budgetKey(scope: DataScope): string {
  return scope.livemode ? scope.teamId : `${scope.teamId}:test`;
}

/**
 * budgetKey in SQL, for a statement that spends a budget in the round trip that finds its team
 * (the API key's look-up); RateLimiters.settle checks the two agree on every spend.
 */
export function budgetKeySql(teamId: SQLWrapper, livemode: SQLWrapper): SQL {
  return sql`${teamId}::text || case when ${livemode} then '' else ':test' end`;
}

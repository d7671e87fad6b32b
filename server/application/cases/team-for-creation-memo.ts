import { LRUCache } from 'lru-cache';
import type { Queryable } from '@/db/client';
import { usageSince } from '@/server/billing/charge-case-methods';
import { readTeamForCreation, type TeamForCreation } from '@/server/cases/queries';
import type { DataScope } from '@/server/platform/data-scope';

/**
 * What a single creation reads of its team (readTeamForCreation: how it appears, its billing
 * anchor, whether its allowance seems to cover the case, whether an endpoint awaits
 * `case.created`), remembered by each process for a few seconds, so that one team's burst of
 * creations costs a key look-up and one statement each, as a creation written lean does. Nothing
 * it remembers is trusted: the statement that writes the case checks under the team's lock the
 * allowance, the subscription and the billing anchor, and checks the brand the mails were
 * rendered with and the endpoints it fans out to, and refuses itself when any of them is not as
 * remembered (createCaseAtOnce then forgets the team and creates the case the long way).
 */
const REMEMBERED_MS = 5_000;

const remembered = new LRUCache<string, TeamForCreation>({ max: 10_000, ttl: REMEMBERED_MS });

function keyOf(scope: DataScope): string {
  return `${scope.teamId}:${scope.livemode ? 'live' : 'test'}`;
}

/** The team as a creation at `now` reads it: remembered, or read and remembered. */
export async function teamForCreation(db: Queryable, scope: DataScope, now: Date): Promise<TeamForCreation> {
  const key = keyOf(scope);
  const known = remembered.get(key);
  if (known) return known;
  const read = await readTeamForCreation(db, scope, usageSince(now));
  remembered.set(key, read);
  return read;
}

/** Forgets what was remembered of the team, once a statement found it out of date. */
export function forgetTeamForCreation(scope: DataScope): void {
  remembered.delete(keyOf(scope));
}

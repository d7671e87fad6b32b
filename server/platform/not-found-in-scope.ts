import { and, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from '@/db/client';
import { type DataScope, modeOf } from './data-scope';
import { AppError } from './errors';

/** A table of mode-bound rows (cases, events, webhook endpoints, deliveries). */
export type ModeBoundTable = PgTable & { id: PgColumn; teamId: PgColumn; livemode: PgColumn };

/**
 * The 404 for an id this scope does not hold, the one place every lookup by id answers it. When
 * the same team's other mode holds the id, the detail says so and which key (or console switch)
 * to use, as Stripe does ("… exists in test mode, but a live mode key was used"): a live key
 * asking for its own test case is a mistake worth naming. Another team's id, an unknown one and a
 * malformed one (`id` null) get `detail` alone: the check asks about the caller's own team only,
 * so it tells nothing about any other team's ids. Called on a miss only, so a hit costs nothing.
 */
export async function notFoundInScope(
  db: Queryable,
  table: ModeBoundTable,
  scope: DataScope,
  id: string | null,
  what: { noun: string; detail?: string },
): Promise<AppError> {
  const detail = what.detail ?? `No ${what.noun} with this id.`;
  if (id === null) return new AppError('NOT_FOUND', detail);
  const [other] = await db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.teamId, scope.teamId), eq(table.livemode, !scope.livemode), eq(table.id, id)))
    .limit(1);
  if (!other) return new AppError('NOT_FOUND', detail);
  const here = modeOf(scope.livemode);
  const there = modeOf(!scope.livemode);
  return new AppError(
    'NOT_FOUND',
    `No ${what.noun} with this id in ${here} mode: it belongs to this team’s ${there} mode. Ask with a ` +
      `${there} key (vouch_${there}_…), or turn ${scope.livemode ? 'on' : 'off'} the console’s Test data switch.`,
  );
}

import { and, eq, gt, lt, type SQL } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { events } from '@/db/schema';
import type { DataScope } from '@/server/platform/data-scope';
import { type EventEnvelope, type EventType, eventEnvelope } from '@/server/platform/outbox/record-events';
import { type KeysetPage, readKeysetPage } from '@/server/platform/pagination';
import type { ListEventsInput } from './wire';

type EventRow = typeof events.$inferSelect;

function toEnvelope(row: EventRow): EventEnvelope {
  return eventEnvelope({
    id: row.id,
    type: row.type as EventType,
    createdAt: row.createdAt,
    livemode: row.livemode,
    data: row.data,
  });
}

/** The scope's conditions on the events table: one team, one mode. */
function inScope(scope: DataScope) {
  return and(eq(events.teamId, scope.teamId), eq(events.livemode, scope.livemode));
}

/** A page of the team's events in one mode, newest first (server/platform/pagination.ts, as every list). */
export async function listEvents(
  db: Queryable,
  scope: DataScope,
  filters: ListEventsInput,
): Promise<KeysetPage<EventEnvelope>> {
  const conditions: Array<SQL | undefined> = [inScope(scope)];
  if (filters.type) conditions.push(eq(events.type, filters.type));
  if (filters.case_id) conditions.push(eq(events.caseId, filters.case_id));
  if (filters.created_after) conditions.push(gt(events.createdAt, new Date(filters.created_after)));
  if (filters.created_before) conditions.push(lt(events.createdAt, new Date(filters.created_before)));
  const page = await readKeysetPage(filters.cursor, events, ({ after, order, limit }) =>
    db
      .select()
      .from(events)
      .where(and(...conditions, after))
      .orderBy(...order)
      .limit(limit),
  );
  return { ...page, results: page.results.map(toEnvelope) };
}

/**
 * One event of the team in one mode, or null (another team's event, or the other mode's, is
 * indistinguishable from a missing one).
 */
export async function findEventForTeam(
  db: Queryable,
  scope: DataScope,
  rowId: string,
): Promise<EventEnvelope | null> {
  const [row] = await db
    .select()
    .from(events)
    .where(and(inScope(scope), eq(events.id, rowId)));
  return row ? toEnvelope(row) : null;
}

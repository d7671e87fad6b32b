import { and, eq, gt, lt, type SQL } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { events } from '@/db/schema';
import type { DataScope } from '@/server/platform/data-scope';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { type EventEnvelope, type EventType, eventEnvelope } from '@/server/platform/outbox/record-events';
import { type KeysetPage, readKeysetPage } from '@/server/platform/pagination';
import { eventRowId, type ListEventsInput } from './wire';

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
 * The event an `evt_…` id names for this team and mode, or 404 NOT_FOUND: an unknown id, another
 * team's event and a malformed id look the same; the team's other mode's event says so
 * (notFoundInScope).
 */
export async function findTeamEventOrFail(
  db: Queryable,
  scope: DataScope,
  wireId: string,
): Promise<EventEnvelope> {
  const rowId = eventRowId(wireId);
  const [row] = rowId
    ? await db
        .select()
        .from(events)
        .where(and(inScope(scope), eq(events.id, rowId)))
    : [];
  if (!row) throw await notFoundInScope(db, events, scope, rowId, { noun: 'event' });
  return toEnvelope(row);
}

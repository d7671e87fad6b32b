import { and, eq, gt, lt, type SQL } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { events } from '@/db/schema';
import { type EventEnvelope, type EventType, eventEnvelope } from '@/server/platform/outbox/record-events';
import { type KeysetPage, readKeysetPage } from '@/server/platform/pagination';
import type { ListEventsInput } from './wire';

type EventRow = typeof events.$inferSelect;

function toEnvelope(row: EventRow): EventEnvelope {
  return eventEnvelope({ id: row.id, type: row.type as EventType, createdAt: row.createdAt, data: row.data });
}

/** A page of the team's events, newest first (server/platform/pagination.ts, as every list). */
export async function listEvents(
  db: Queryable,
  teamId: string,
  filters: ListEventsInput,
): Promise<KeysetPage<EventEnvelope>> {
  const conditions: Array<SQL | undefined> = [eq(events.teamId, teamId)];
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

/** One event of the team, or null (another team's event is indistinguishable from a missing one). */
export async function findEventForTeam(
  db: Queryable,
  teamId: string,
  rowId: string,
): Promise<EventEnvelope | null> {
  const [row] = await db
    .select()
    .from(events)
    .where(and(eq(events.teamId, teamId), eq(events.id, rowId)));
  return row ? toEnvelope(row) : null;
}

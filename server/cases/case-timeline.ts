import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { events, webhookDeliveries } from '@/db/schema';

/**
 * A case's events and their webhook deliveries, oldest first, for the console's case page. Events
 * recorded in one transaction share their instant (a step passing and the case closing), so within
 * an instant they follow the case's life.
 */
export async function readCaseTimeline(db: Queryable, teamId: string, caseId: string) {
  const timeline = await db
    .select()
    .from(events)
    .where(and(eq(events.teamId, teamId), eq(events.caseId, caseId)))
    .orderBy(
      asc(events.createdAt),
      asc(sql`case ${events.type} when 'case.created' then 0 when 'verification.step_completed' then 1
              when 'case.redacted' then 3 else 2 end`),
    );
  const deliveries =
    timeline.length === 0
      ? []
      : await db
          .select()
          .from(webhookDeliveries)
          .where(
            and(
              eq(webhookDeliveries.teamId, teamId),
              inArray(
                webhookDeliveries.eventId,
                timeline.map((e) => e.id),
              ),
            ),
          )
          .orderBy(asc(webhookDeliveries.createdAt));
  return { events: timeline, deliveries };
}

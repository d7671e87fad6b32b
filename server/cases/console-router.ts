import { and, asc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { events, webhookDeliveries } from '@/db/schema';
import { router, sessionProcedure } from '@/server/api/trpc/init';
import { AppError } from '@/server/platform/errors';
import { eventWireId } from '@/server/platform/ids';
import { findCaseForTeam } from './case-repository';
import { listCases } from './list-cases';
import { listCasesInput, toCaseWire } from './wire';

export const consoleCasesRouter = router({
  /** The API's list (same filters, same cursors); the console passes cursors back as given. */
  list: sessionProcedure.input(listCasesInput).query(async ({ ctx, input }) => {
    const now = ctx.clock();
    const page = await listCases(ctx.db, ctx.scope, input, now);
    return {
      next_cursor: page.nextCursor,
      previous_cursor: page.previousCursor,
      results: page.results.map((record) => toCaseWire(record, now)),
    };
  }),

  /** One case with the events it caused and their webhook deliveries, oldest first. */
  get: sessionProcedure.input(z.object({ id: z.string().max(100) })).query(async ({ ctx, input }) => {
    const id = z.uuid().safeParse(input.id);
    const record = id.success ? await findCaseForTeam(ctx.db, ctx.scope, id.data) : null;
    if (!record) throw new AppError('NOT_FOUND', 'No case with this id in your team.');
    const timeline = await ctx.db
      .select()
      .from(events)
      .where(and(eq(events.teamId, ctx.teamId), eq(events.caseId, record.id)))
      .orderBy(asc(events.createdAt));
    const deliveries =
      timeline.length === 0
        ? []
        : await ctx.db
            .select()
            .from(webhookDeliveries)
            .where(
              and(
                eq(webhookDeliveries.teamId, ctx.teamId),
                inArray(
                  webhookDeliveries.eventId,
                  timeline.map((e) => e.id),
                ),
              ),
            )
            .orderBy(asc(webhookDeliveries.createdAt));
    return {
      case: toCaseWire(record, ctx.clock()),
      deliveries: deliveries.map((d) => ({
        id: d.id,
        event_id: eventWireId(d.eventId),
        event_type: d.eventType,
        endpoint_id: d.endpointId,
        status: d.status,
        attempt_count: d.attemptCount,
        last_response_status: d.lastResponseStatus,
        created_at: d.createdAt.toISOString(),
      })),
      events: timeline.map((e) => ({
        id: eventWireId(e.id),
        type: e.type,
        created_at: e.createdAt.toISOString(),
        data: e.data,
      })),
    };
  }),
});

import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { cases, events, webhookDeliveries } from '@/db/schema';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { auditedChange } from '@/server/audit/record-audit';
import { eventWireId } from '@/server/platform/ids';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { caseAudit } from './audit-entries';
import { auditedCaseActions } from './audited-actions';
import { caseEndedAt } from './case-ended-at';
import { findCaseForTeam } from './case-repository';
import { createCase, prepareCase } from './create-case';
import { listCases } from './list-cases';
import { resendLinksInput } from './resend-links';
import { caseForConsoleRole, eventDataForConsoleRole } from './subject-link-visibility';
import { createCaseInput, listCasesInput, toCaseWire } from './wire';

const caseId = z.object({ id: z.string().max(100) });

export const consoleCasesRouter = router({
  /**
   * The API's list (same filters, same cursors); the console passes cursors back as given. An
   * empty first page also says whether the team's other mode has cases that match: the console
   * opens in live mode, and a team that has only made test cases would otherwise see an empty
   * list with no hint of where its cases are. Asked only then, and bounded like any page.
   */
  list: sessionProcedure.input(listCasesInput).query(async ({ ctx, input }) => {
    const now = ctx.clock();
    const page = await listCases(ctx.db, ctx.scope, input, now);
    const otherModeMatches =
      page.results.length === 0 && !input.cursor
        ? (await listCases(ctx.db, { ...ctx.scope, livemode: !ctx.scope.livemode }, input, now)).results
            .length > 0
        : false;
    return {
      next_cursor: page.nextCursor,
      previous_cursor: page.previousCursor,
      results: page.results.map((record) => caseForConsoleRole(toCaseWire(record, now), ctx.role)),
      other_mode_matches: otherModeMatches,
    };
  }),

  /** One case with the events it caused and their webhook deliveries, oldest first. */
  get: sessionProcedure.input(z.object({ id: z.string().max(100) })).query(async ({ ctx, input }) => {
    const id = z.uuid().safeParse(input.id);
    const record = id.success ? await findCaseForTeam(ctx.db, ctx.scope, id.data) : null;
    if (!record) {
      throw await notFoundInScope(ctx.db, cases, ctx.scope, id.success ? id.data : null, {
        noun: 'case',
        detail: 'No case with this id in your team.',
      });
    }
    // In the order things happened. Events recorded in one transaction share their instant (a
    // step passing and the case closing), so within an instant they follow the case's life.
    const timeline = await ctx.db
      .select()
      .from(events)
      .where(and(eq(events.teamId, ctx.teamId), eq(events.caseId, record.id)))
      .orderBy(
        asc(events.createdAt),
        asc(sql`case ${events.type} when 'case.created' then 0 when 'verification.step_completed' then 1
                when 'case.redacted' then 3 else 2 end`),
      );
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
    const now = ctx.clock();
    const endedAt = caseEndedAt(record, now, timeline);
    return {
      case: caseForConsoleRole(toCaseWire(record, now), ctx.role),
      /** When the case ended (null while open): the API's Case has no such field. */
      ended_at: endedAt?.toISOString() ?? null,
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
        data: eventDataForConsoleRole(e.data, ctx.role),
      })),
    };
  }),

  /**
   * The helpdesk's case: the same rules, billing and events as `POST /v1/cases/`, made by an
   * owner or admin in the console's current mode, and audited.
   */
  create: managerProcedure.input(createCaseInput).mutation(async ({ ctx, input }) => {
    const prepared = await prepareCase(input);
    const record = await auditedChange(
      ctx,
      (tx) =>
        createCase(tx, ctx.scope, prepared, { clock: ctx.clock, caseTtlSeconds: ctx.env.CASE_TTL_SECONDS }),
      caseAudit('case.created'),
    );
    return toCaseWire(record, ctx.clock());
  }),

  cancel: managerProcedure
    .input(caseId)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.cancel(ctx, input.id), ctx.clock()),
    ),

  resend: managerProcedure
    .input(resendLinksInput)
    .mutation(async ({ ctx, input }) => toCaseWire(await auditedCaseActions.resend(ctx, input), ctx.clock())),

  redact: managerProcedure
    .input(caseId)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.redact(ctx, input.id), ctx.clock()),
    ),
});

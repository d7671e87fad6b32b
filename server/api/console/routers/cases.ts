import { z } from 'zod';
import { cases } from '@/db/schema';
import { evidenceContext } from '@/server/api/evidence-context';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { wireContext } from '@/server/api/wire-context';
import { auditedCaseActions } from '@/server/application/cases/audited-actions';
import { downloadEvidence } from '@/server/application/cases/download-evidence';
import { listCases } from '@/server/application/cases/list-cases';
import { openAuditedCase } from '@/server/application/cases/open-case';
import { resendLinksInput } from '@/server/application/cases/resend-links';
import {
  caseForConsoleRole,
  eventDataForConsoleRole,
} from '@/server/application/cases/subject-link-visibility';
import { createCaseInput, listCasesInput, toCaseWire } from '@/server/application/cases/wire';
import { caseEndedAt } from '@/server/cases/case-ended-at';
import { findCaseForTeam } from '@/server/cases/case-repository';
import { readCaseTimeline } from '@/server/cases/case-timeline';
import { eventWireId, isUuid } from '@/server/platform/ids';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';

const caseId = z.object({ id: z.string().max(100) });

export const consoleCasesRouter = router({
  /**
   * The API's list (same filters, same cursors); the console passes cursors back as given. An
   * empty first page also says whether the team's other mode has cases that match: the console
   * opens in live mode, and a team that has only made test cases would otherwise see an empty
   * list with no hint of where its cases are. Asked only then, and bounded like any page.
   */
  list: sessionProcedure.input(listCasesInput).query(async ({ ctx, input }) => {
    const at = wireContext(ctx);
    const page = await listCases(ctx.db, ctx.scope, input, at.now);
    const otherModeMatches =
      page.results.length === 0 && !input.cursor
        ? (await listCases(ctx.db, { ...ctx.scope, livemode: !ctx.scope.livemode }, input, at.now)).results
            .length > 0
        : false;
    return {
      next_cursor: page.nextCursor,
      previous_cursor: page.previousCursor,
      results: page.results.map((record) => caseForConsoleRole(toCaseWire(record, at), ctx.role)),
      other_mode_matches: otherModeMatches,
    };
  }),

  /** One case with the events it caused and their webhook deliveries, oldest first. */
  get: sessionProcedure.input(z.object({ id: z.string().max(100) })).query(async ({ ctx, input }) => {
    const valid = isUuid(input.id);
    const record = valid ? await findCaseForTeam(ctx.db, ctx.scope, input.id) : null;
    if (!record) {
      throw await notFoundInScope(ctx.db, cases, ctx.scope, valid ? input.id : null, {
        noun: 'case',
        detail: 'No case with this id in your team.',
      });
    }
    const { events: timeline, deliveries } = await readCaseTimeline(ctx.db, ctx.teamId, record.id);
    const at = wireContext(ctx);
    const endedAt = caseEndedAt(record, at.now, timeline);
    return {
      case: caseForConsoleRole(toCaseWire(record, at), ctx.role),
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
    const record = await openAuditedCase({ ...ctx, caseTtlSeconds: ctx.env.CASE_TTL_SECONDS }, input);
    return toCaseWire(record, wireContext(ctx));
  }),

  cancel: managerProcedure
    .input(caseId)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.cancel(ctx, input.id), wireContext(ctx)),
    ),

  resend: managerProcedure
    .input(resendLinksInput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.resend(ctx, input), wireContext(ctx)),
    ),

  redact: managerProcedure
    .input(caseId)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.redact(ctx, input.id), wireContext(ctx)),
    ),

  /** The signed evidence record for any member (viewers too): the browser saves the file it gets. */
  evidence: sessionProcedure
    .input(caseId.extend({ format: z.enum(['json', 'pdf']) }))
    .mutation(async ({ ctx, input }) => {
      const download = await downloadEvidence(evidenceContext(ctx), input.id, input.format);
      return {
        file_name: download.fileName,
        media_type: download.mediaType,
        content_base64: Buffer.from(download.body).toString('base64'),
      };
    }),
});

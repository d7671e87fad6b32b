import { z } from 'zod';
import { router, sessionProcedure } from '@/server/api/trpc/init';
import { revealEvidenceKey } from '@/server/application/team/evidence-key';
import { listAudit } from '@/server/audit/record-audit';
import { AppError } from '@/server/platform/errors';

const cursor = z.object({ created_at: z.iso.datetime({ offset: true }), id: z.uuid() });

export const consoleAuditRouter = router({
  list: sessionProcedure.input(z.object({ before: cursor.optional() })).query(async ({ ctx, input }) => {
    const page = await listAudit(
      ctx.db,
      ctx.teamId,
      input.before ? { createdAt: new Date(input.before.created_at), id: input.before.id } : null,
    );
    return {
      entries: page.entries.map((e) => ({
        id: e.id,
        actor_email: e.actorEmail,
        action: e.action,
        target: e.target,
        details: e.details,
        ip_address: e.ipAddress,
        user_agent: e.userAgent,
        created_at: e.createdAt.toISOString(),
        /** Its place in the team's hash chain, once the sealing job has sealed it. */
        chain_seq: e.chainSeq,
      })),
      next: page.next ? { created_at: page.next.createdAt.toISOString(), id: page.next.id } : null,
    };
  }),

  /** The team's evidence key, for owners only (see revealEvidenceKey); each reveal is audited. */
  evidenceKey: sessionProcedure.mutation(async ({ ctx }) => {
    if (ctx.role !== 'owner') {
      throw new AppError('FORBIDDEN', 'Only the team’s owners may see its evidence key.');
    }
    return { evidence_key: await revealEvidenceKey(ctx) };
  }),
});

import { z } from 'zod';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { templateActions } from '@/server/application/templates/template-actions';
import {
  createTemplateInput,
  templateIdInput,
  toTemplateWire,
  updateTemplateInput,
} from '@/server/application/templates/wire';
import { listTemplates } from '@/server/templates/templates';

/**
 * The team's templates in the console, in the mode its switch shows: every member reads them,
 * owners and admins change them. The list may name the other mode (the Identity providers form
 * offers the templates of the mode chosen for a new client).
 */
export const consoleTemplatesRouter = router({
  list: sessionProcedure
    .input(z.object({ mode: z.enum(['live', 'test']).optional() }).optional())
    .query(async ({ ctx, input }) => {
      const livemode = input?.mode === undefined ? ctx.scope.livemode : input.mode === 'live';
      return { results: (await listTemplates(ctx.db, { ...ctx.scope, livemode })).map(toTemplateWire) };
    }),
  create: managerProcedure
    .input(createTemplateInput)
    .mutation(async ({ ctx, input }) => toTemplateWire(await templateActions.create(ctx, input))),
  update: managerProcedure
    .input(updateTemplateInput)
    .mutation(async ({ ctx, input }) => toTemplateWire(await templateActions.update(ctx, input))),
  delete: managerProcedure.input(templateIdInput).mutation(async ({ ctx, input }) => {
    await templateActions.delete(ctx, input.id);
    return { deleted: true };
  }),
});

import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { templateActions } from '@/server/application/templates/template-actions';
import {
  createTemplateInput,
  templateIdInput,
  toTemplateWire,
  updateTemplateInput,
} from '@/server/application/templates/wire';
import { listTemplates } from '@/server/templates/templates';

/** The team's templates in the console: every member reads them, owners and admins change them. */
export const consoleTemplatesRouter = router({
  list: sessionProcedure.query(async ({ ctx }) => ({
    results: (await listTemplates(ctx.db, ctx.teamId)).map(toTemplateWire),
  })),
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

import { z } from 'zod';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { templateActions } from '@/server/application/templates/template-actions';
import {
  createTemplateInput,
  templateIdInput,
  templateListOutput,
  templateOutput,
  toTemplateWire,
  updateTemplateInput,
} from '@/server/application/templates/wire';
import { findTemplateOrFail, listTemplates, TEMPLATE_LIMIT } from '@/server/templates/templates';

const TAGS = ['Templates'];

export const templatesRouter = router({
  create: apiKeyProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/templates/',
        tags: TAGS,
        summary: 'Create a verification template',
        description: `A named set of methods with their settings, in the mode of the key that creates it (a test key sees and changes test templates only, a live key live ones; at most ${TEMPLATE_LIMIT} in each). A case names it as \`template\` instead of listing methods, and an identity provider's flow picks it by the scope \`idv_flow_<name>\`. The methods' fields (a custom question, a manager) are the ones a case takes; leave a method's fields out for each case to give them. A custom question's answer is kept only as a hash and never returned.`,
        successDescription: 'The template (201).',
      },
    })
    .input(createTemplateInput)
    .output(templateOutput)
    .mutation(async ({ ctx, input }) => {
      const template = await templateActions.create(ctx, input);
      ctx.responseHeaders.set('Location', `${ctx.env.BASE_URL}/v1/templates/${template.id}/`);
      return toTemplateWire(template);
    }),

  list: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/templates/', tags: TAGS, summary: 'List the team’s templates' },
    })
    .input(z.object({}))
    .output(templateListOutput)
    .query(async ({ ctx }) => ({ results: (await listTemplates(ctx.db, ctx.scope)).map(toTemplateWire) })),

  get: apiKeyProcedure
    .meta({ openapi: { method: 'GET', path: '/templates/{id}/', tags: TAGS, summary: 'Get one template' } })
    .input(templateIdInput)
    .output(templateOutput)
    .query(async ({ ctx, input }) => toTemplateWire(await findTemplateOrFail(ctx.db, ctx.scope, input.id))),

  update: apiKeyProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/templates/{id}/',
        tags: TAGS,
        summary: 'Update a template',
        description:
          'Changes what it names: `name`, `locale`, `verification_methods` (the whole set: the settings of methods it no longer requests go), a method’s fields (together; null both to leave them to each case). Cases already opened keep what they started with.',
      },
    })
    .input(updateTemplateInput)
    .output(templateOutput)
    .mutation(async ({ ctx, input }) => toTemplateWire(await templateActions.update(ctx, input))),

  delete: apiKeyProcedure
    .meta({
      successStatus: 204,
      openapi: {
        method: 'DELETE',
        path: '/templates/{id}/',
        tags: TAGS,
        summary: 'Delete a template',
        description: 'Cases already opened from it are unchanged; new cases can no longer name it.',
      },
    })
    .input(templateIdInput)
    .output(z.null())
    .mutation(async ({ ctx, input }) => {
      await templateActions.delete(ctx, input.id);
      return null;
    }),
});

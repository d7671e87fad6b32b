import { z } from 'zod';
import { accountRouter } from '@/server/api/rest/routers/account';
import { casesRouter } from '@/server/api/rest/routers/cases';
import { eventsRouter } from '@/server/api/rest/routers/events';
import { passkeysRouter } from '@/server/api/rest/routers/passkeys';
import { templatesRouter } from '@/server/api/rest/routers/templates';
import { webhooksRouter } from '@/server/api/rest/routers/webhooks';
import { consoleRouter } from './console-router';
import { publicProcedure, router } from './init';

const healthRouter = router({
  ping: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/ping',
        tags: ['Health'],
        summary: 'Health check (no authentication)',
        protect: false,
      },
    })
    .input(z.object({}))
    .output(
      z.object({
        status: z
          .literal('ok')
          .meta({ description: 'Always `ok` when the service answers.', examples: ['ok'] }),
        time: z.string().meta({
          description: 'The service’s clock (ISO 8601, UTC).',
          examples: ['2026-01-31T09:00:00.000Z'],
        }),
      }),
    )
    .query(({ ctx }) => ({ status: 'ok' as const, time: ctx.clock().toISOString() })),
});

/** The one router: REST under /v1 and the console both use it. */
export const appRouter = router({
  health: healthRouter,
  cases: casesRouter,
  account: accountRouter,
  console: consoleRouter,
  webhooks: webhooksRouter,
  events: eventsRouter,
  templates: templatesRouter,
  passkeys: passkeysRouter,
});

export type AppRouter = typeof appRouter;

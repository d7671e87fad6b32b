import { pageUrl } from '@/server/api/page-url';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { findTeamEventOrFail, listEvents } from '@/server/events/list-events';
import { eventIdInput, eventListOutput, eventOutput, listEventsInput } from '@/server/events/wire';

const TAGS = ['Events'];

export const eventsRouter = router({
  list: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/events/',
        tags: TAGS,
        summary: 'List events',
        description:
          'The envelopes exactly as webhooks deliver them, 50 per page, newest first, filtered by type, case_id, created_after and created_before.',
      },
    })
    .input(listEventsInput)
    .output(eventListOutput)
    .query(async ({ ctx, input }) => {
      const page = await listEvents(ctx.db, ctx.scope, input);
      return {
        next: pageUrl(ctx.env.BASE_URL, '/v1/events/', input, page.nextCursor),
        previous: pageUrl(ctx.env.BASE_URL, '/v1/events/', input, page.previousCursor),
        results: page.results,
      };
    }),

  get: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/events/{id}/', tags: TAGS, summary: 'Get one event' },
    })
    .input(eventIdInput)
    .output(eventOutput)
    .query(async ({ ctx, input }) => findTeamEventOrFail(ctx.db, ctx.scope, input.id)),
});

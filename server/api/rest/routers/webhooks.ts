import { z } from 'zod';
import { pageUrl } from '@/server/api/page-url';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { webhookActions } from '@/server/application/webhooks/endpoint-actions';
import { SUBSCRIBABLE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { getDelivery, listDeliveries } from '@/server/webhooks/deliveries';
import { getEndpoint, listEndpoints } from '@/server/webhooks/manage-endpoints';
import {
  createEndpointInput,
  deliveryDetailOutput,
  deliveryIdInput,
  deliveryListOutput,
  deliveryOutput,
  endpointIdInput,
  endpointListOutput,
  endpointOutput,
  endpointWithSecretOutput,
  listDeliveriesInput,
  recoverDeliveriesInput,
  recoverDeliveriesOutput,
  toDeliveryDetailWire,
  toDeliveryWire,
  toEndpointWire,
  updateEndpointInput,
} from '@/server/webhooks/wire';

const TAGS = ['Webhooks'];

export const webhooksRouter = router({
  createEndpoint: apiKeyProcedure
    .meta({
      successStatus: 201,
      errors: ['INVALID_URL', 'INVALID_EVENTS', 'ENDPOINT_LIMIT_REACHED'],
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/',
        tags: TAGS,
        summary: 'Create a webhook endpoint',
        description: `HTTPS on port 443, to a public host (INVALID_URL: a private address, or a name only a local network knows such as localhost or *.internal, is refused; run \`npm run listen\` to receive events on your own machine); \`events\` lists one or more of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')} (INVALID_EVENTS). At most 10 per team (ENDPOINT_LIMIT_REACHED). The signing secret is returned here and by rotate-secret only.`,
        successDescription: 'The endpoint with its signing secret (201).',
      },
    })
    .input(createEndpointInput)
    .output(endpointWithSecretOutput)
    .mutation(async ({ ctx, input }) => {
      const row = await webhookActions.createEndpoint(ctx, input);
      ctx.responseHeaders.set('Location', `${ctx.env.BASE_URL}/v1/webhooks/endpoints/${row.id}/`);
      return { ...toEndpointWire(row), secret: row.secret };
    }),

  listEndpoints: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/endpoints/', tags: TAGS, summary: 'List webhook endpoints' },
    })
    .input(z.object({}))
    .output(endpointListOutput)
    .query(async ({ ctx }) => ({ results: (await listEndpoints(ctx.db, ctx.scope)).map(toEndpointWire) })),

  getEndpoint: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/endpoints/{id}/', tags: TAGS, summary: 'Get one endpoint' },
    })
    .input(endpointIdInput)
    .output(endpointOutput)
    .query(async ({ ctx, input }) => toEndpointWire(await getEndpoint(ctx.db, ctx.scope, input.id))),

  updateEndpoint: apiKeyProcedure
    .meta({
      errors: ['INVALID_URL', 'INVALID_EVENTS'],
      openapi: {
        method: 'PATCH',
        path: '/webhooks/endpoints/{id}/',
        tags: TAGS,
        summary: 'Update an endpoint',
        description:
          'Accepts url, events, description and is_active. `is_active: true` resets the failure count, clears disabled_at and resumes the deliveries held while the endpoint was disabled.',
      },
    })
    .input(updateEndpointInput)
    .output(endpointOutput)
    .mutation(async ({ ctx, input }) => {
      const { id, ...changes } = input;
      return toEndpointWire(await webhookActions.updateEndpoint(ctx, id, changes));
    }),

  deleteEndpoint: apiKeyProcedure
    .meta({
      successStatus: 204,
      openapi: {
        method: 'DELETE',
        path: '/webhooks/endpoints/{id}/',
        tags: TAGS,
        summary: 'Delete an endpoint',
      },
    })
    .input(endpointIdInput)
    .output(z.null())
    .mutation(async ({ ctx, input }) => {
      await webhookActions.deleteEndpoint(ctx, input.id);
      return null;
    }),

  rotateSecret: apiKeyProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/rotate-secret/',
        tags: TAGS,
        summary: 'Generate a new signing secret',
        description:
          'The previous secret stops being used at once; the new one is returned as `secret`, once.',
      },
    })
    .input(endpointIdInput)
    .output(endpointWithSecretOutput)
    .mutation(async ({ ctx, input }) => {
      const row = await webhookActions.rotateSecret(ctx, input.id);
      return { ...toEndpointWire(row), secret: row.secret };
    }),

  testEndpoint: apiKeyProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/test/',
        tags: TAGS,
        summary: 'Send a test ping event',
        description: 'Queues a `ping` delivery, attempted even while the endpoint is disabled.',
        successDescription: 'The queued delivery (202).',
      },
    })
    .input(endpointIdInput)
    .output(deliveryOutput)
    .mutation(async ({ ctx, input }) => toDeliveryWire(await webhookActions.sendTest(ctx, input.id))),

  recoverEndpoint: apiKeyProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/recover/',
        tags: TAGS,
        summary: 'Send failed deliveries again after an outage',
        description:
          'Queues one new attempt for every failed or dead-lettered delivery of this endpoint created since `since` (ISO 8601 with a time zone, at most 7 days back).',
        successDescription: 'How many deliveries were queued (202).',
      },
    })
    .input(recoverDeliveriesInput)
    .output(recoverDeliveriesOutput)
    .mutation(({ ctx, input }) => webhookActions.recover(ctx, input.id, input.since)),

  listDeliveries: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/deliveries/',
        tags: TAGS,
        summary: 'List deliveries',
        description: '50 per page, newest first, filtered by endpoint_id, status and event_type.',
      },
    })
    .input(listDeliveriesInput)
    .output(deliveryListOutput)
    .query(async ({ ctx, input }) => {
      const page = await listDeliveries(ctx.db, ctx.scope, input);
      return {
        next: pageUrl(ctx.env.BASE_URL, '/v1/webhooks/deliveries/', input, page.nextCursor),
        previous: pageUrl(ctx.env.BASE_URL, '/v1/webhooks/deliveries/', input, page.previousCursor),
        results: page.results.map(toDeliveryWire),
      };
    }),

  getDelivery: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/deliveries/{id}/',
        tags: TAGS,
        summary: 'Get one delivery with its attempts',
      },
    })
    .input(deliveryIdInput)
    .output(deliveryDetailOutput)
    .query(async ({ ctx, input }) => {
      const { delivery, attempts } = await getDelivery(ctx.db, ctx.scope, input.id);
      return toDeliveryDetailWire(delivery, attempts);
    }),

  retryDelivery: apiKeyProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/webhooks/deliveries/{id}/retry/',
        tags: TAGS,
        summary: 'Send a failed or dead-lettered delivery again',
        successDescription: 'The delivery, queued for an attempt now (202).',
      },
    })
    .input(deliveryIdInput)
    .output(deliveryOutput)
    .mutation(async ({ ctx, input }) => toDeliveryWire(await webhookActions.retryDelivery(ctx, input.id))),
});

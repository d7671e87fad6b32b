import { z } from 'zod';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { deliveryPayloadForConsoleRole } from '@/server/application/cases/subject-link-visibility';
import { webhookActions } from '@/server/application/webhooks/endpoint-actions';
import { SUBSCRIBABLE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { getDelivery, listDeliveries } from '@/server/webhooks/deliveries';
import { getEndpoint, listEndpoints } from '@/server/webhooks/manage-endpoints';
import {
  createEndpointInput,
  listDeliveriesInput,
  toDeliveryDetailWire,
  toDeliveryWire,
  toEndpointWire,
  updateEndpointInput,
} from '@/server/webhooks/wire';

const endpointId = z.object({ id: z.string().max(100) });

/**
 * The console's webhook pages: the same use cases (and so the same validation and audit trail) as
 * the REST API, plus the password-guarded secret reveal.
 */
export const consoleWebhooksRouter = router({
  /** The event types an endpoint can subscribe to (the form's checkboxes). */
  eventTypes: sessionProcedure.query(() => [...SUBSCRIBABLE_EVENT_TYPES]),

  list: sessionProcedure.query(async ({ ctx }) =>
    (await listEndpoints(ctx.db, ctx.scope)).map(toEndpointWire),
  ),

  get: sessionProcedure
    .input(endpointId)
    .query(async ({ ctx, input }) => toEndpointWire(await getEndpoint(ctx.db, ctx.scope, input.id))),

  /** The answer carries the signing secret: the one time it is shown. */
  create: managerProcedure.input(createEndpointInput).mutation(async ({ ctx, input }) => {
    const row = await webhookActions.createEndpoint(ctx, input);
    return { ...toEndpointWire(row), secret: row.secret };
  }),

  update: managerProcedure.input(updateEndpointInput).mutation(async ({ ctx, input }) => {
    const { id, ...changes } = input;
    return toEndpointWire(await webhookActions.updateEndpoint(ctx, id, changes));
  }),

  delete: managerProcedure.input(endpointId).mutation(async ({ ctx, input }) => {
    await webhookActions.deleteEndpoint(ctx, input.id);
    return { deleted: true };
  }),

  /** The old secret stops working at once; the new one is shown this once. */
  rotateSecret: managerProcedure.input(endpointId).mutation(async ({ ctx, input }) => {
    const row = await webhookActions.rotateSecret(ctx, input.id);
    return { ...toEndpointWire(row), secret: row.secret };
  }),

  /** Shows the current secret again, after the user re-enters their password. */
  revealSecret: managerProcedure
    .input(endpointId.extend({ password: z.string().min(1, 'Enter your password.').max(200) }))
    .mutation(async ({ ctx, input }) => {
      const endpoint = await webhookActions.revealSecret(ctx, input.id, input.password);
      return { id: endpoint.id, secret: endpoint.secret };
    }),

  sendTest: managerProcedure
    .input(endpointId)
    .mutation(async ({ ctx, input }) => toDeliveryWire(await webhookActions.sendTest(ctx, input.id))),

  deliveries: sessionProcedure.input(listDeliveriesInput).query(async ({ ctx, input }) => {
    const page = await listDeliveries(ctx.db, ctx.scope, input);
    return {
      next_cursor: page.nextCursor,
      previous_cursor: page.previousCursor,
      results: page.results.map(toDeliveryWire),
    };
  }),

  delivery: sessionProcedure.input(endpointId).query(async ({ ctx, input }) => {
    const { delivery, attempts } = await getDelivery(ctx.db, ctx.scope, input.id);
    const detail = toDeliveryDetailWire(delivery, attempts);
    return { ...detail, payload: deliveryPayloadForConsoleRole(detail.payload, ctx.role) };
  }),

  retry: managerProcedure
    .input(endpointId)
    .mutation(async ({ ctx, input }) => toDeliveryWire(await webhookActions.retryDelivery(ctx, input.id))),
});

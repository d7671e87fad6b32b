import { z } from 'zod';
import { recordAudit } from '../audit/record-audit';
import { checkPassword, readPasswordHash } from '../auth/team-members';
import { CASE_EVENT_TYPES } from '../events/record-event';
import { AppError } from '../trpc/errors';
import { managerProcedure, router, sessionProcedure } from '../trpc/init';
import { getDelivery, listDeliveries, retryDelivery } from './deliveries';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  sendTestPing,
  updateEndpoint,
} from './manage-endpoints';
import {
  createEndpointInput,
  listDeliveriesInput,
  toAttemptWire,
  toDeliveryWire,
  toEndpointWire,
  updateEndpointInput,
} from './wire';

const endpointId = z.object({ id: z.string().max(100) });

/**
 * The console's webhook pages: the same domain functions (and so the same validation) as the
 * REST API, plus the audit trail and the password-guarded secret reveal. Each change and its audit
 * entry commit in one transaction, so the log shows exactly the changes that happened.
 */
export const consoleWebhooksRouter = router({
  /** The event types an endpoint can subscribe to (the form's checkboxes). */
  eventTypes: sessionProcedure.query(() => [...CASE_EVENT_TYPES]),

  list: sessionProcedure.query(async ({ ctx }) =>
    (await listEndpoints(ctx.db, ctx.teamId)).map(toEndpointWire),
  ),

  get: sessionProcedure
    .input(endpointId)
    .query(async ({ ctx, input }) => toEndpointWire(await getEndpoint(ctx.db, ctx.teamId, input.id))),

  /** The answer carries the signing secret: the one time it is shown. */
  create: managerProcedure.input(createEndpointInput).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const row = await createEndpoint(tx, ctx.teamId, input, {
        clock: ctx.clock,
        allowPrivateNetworks: ctx.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      });
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.created',
        target: row.id,
        details: { url: row.url, events: row.events },
      });
      return { ...toEndpointWire(row), secret: row.secret };
    }),
  ),

  update: managerProcedure.input(updateEndpointInput).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const { id, ...changes } = input;
      const row = await updateEndpoint(tx, ctx.teamId, id, changes, {
        clock: ctx.clock,
        allowPrivateNetworks: ctx.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      });
      const action =
        changes.is_active === true
          ? 'webhook_endpoint.enabled'
          : changes.is_active === false
            ? 'webhook_endpoint.disabled'
            : 'webhook_endpoint.updated';
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action,
        target: row.id,
        details: changes,
      });
      return toEndpointWire(row);
    }),
  ),

  delete: managerProcedure.input(endpointId).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const endpoint = await getEndpoint(tx, ctx.teamId, input.id);
      await deleteEndpoint(tx, ctx.teamId, endpoint.id);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.deleted',
        target: endpoint.id,
        details: { url: endpoint.url },
      });
      return { deleted: true };
    }),
  ),

  /** The old secret stops working at once; the new one is shown this once. */
  rotateSecret: managerProcedure.input(endpointId).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const row = await rotateEndpointSecret(tx, ctx.teamId, input.id, ctx.clock);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.secret_rotated',
        target: row.id,
      });
      return { ...toEndpointWire(row), secret: row.secret };
    }),
  ),

  /** Shows the current secret again, after the user re-enters their password. */
  revealSecret: managerProcedure
    .input(endpointId.extend({ password: z.string().min(1, 'Enter your password.').max(200) }))
    .mutation(async ({ ctx, input }) => {
      const endpoint = await getEndpoint(ctx.db, ctx.teamId, input.id);
      if ((await readPasswordHash(ctx.db, ctx.user.id)) === null) {
        throw new AppError(
          'FORBIDDEN',
          'You sign in by e-mail link only: set a password (Password page) first.',
        );
      }
      if (!(await checkPassword(ctx.db, ctx.user.id, input.password))) {
        // Wrong guesses spend the caller's address budget, like bad API keys.
        await ctx.rateLimiters.consume('address', ctx.clientAddress);
        throw new AppError('FORBIDDEN', 'That password is not correct.');
      }
      await recordAudit(ctx.db, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.secret_revealed',
        target: endpoint.id,
      });
      return { id: endpoint.id, secret: endpoint.secret };
    }),

  sendTest: managerProcedure.input(endpointId).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const delivery = await sendTestPing(tx, ctx.teamId, input.id, ctx.clock);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.test_sent',
        target: input.id,
        details: { delivery_id: delivery.id },
      });
      return toDeliveryWire(delivery);
    }),
  ),

  deliveries: sessionProcedure.input(listDeliveriesInput).query(async ({ ctx, input }) => {
    const page = await listDeliveries(ctx.db, ctx.teamId, input);
    return {
      next_cursor: page.nextCursor,
      previous_cursor: page.previousCursor,
      results: page.results.map(toDeliveryWire),
    };
  }),

  delivery: sessionProcedure.input(endpointId).query(async ({ ctx, input }) => {
    const { delivery, attempts } = await getDelivery(ctx.db, ctx.teamId, input.id);
    return { ...toDeliveryWire(delivery), attempts: attempts.map(toAttemptWire) };
  }),

  retry: managerProcedure.input(endpointId).mutation(({ ctx, input }) =>
    ctx.db.transaction(async (tx) => {
      const row = await retryDelivery(tx, ctx.teamId, input.id, ctx.clock);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_delivery.retried',
        target: row.id,
      });
      return toDeliveryWire(row);
    }),
  ),
});

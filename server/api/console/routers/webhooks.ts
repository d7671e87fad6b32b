import { z } from 'zod';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { deliveryPayloadForConsoleRole } from '@/server/application/cases/subject-link-visibility';
import { auditedChange, recordAudit } from '@/server/audit/record-audit';
import { confirmCurrentPassword } from '@/server/auth/reauthentication';
import { readPasswordHash } from '@/server/auth/team-members';
import type { Clock } from '@/server/platform/clock';
import { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { CASE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { webhookAudit } from '@/server/webhooks/audit-entries';
import { getDelivery, listDeliveries, retryDelivery } from '@/server/webhooks/deliveries';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  sendTestPing,
  updateEndpoint,
} from '@/server/webhooks/manage-endpoints';
import {
  createEndpointInput,
  listDeliveriesInput,
  toDeliveryDetailWire,
  toDeliveryWire,
  toEndpointWire,
  updateEndpointInput,
} from '@/server/webhooks/wire';

const endpointId = z.object({ id: z.string().max(100) });

function endpointPolicy(ctx: {
  clock: Clock;
  jobs: JobProducer;
  env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean };
}) {
  return { clock: ctx.clock, jobs: ctx.jobs, allowPrivateNetworks: ctx.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS };
}

/**
 * The console's webhook pages: the same domain functions (and so the same validation) as the
 * REST API, plus the audit trail and the password-guarded secret reveal. Each change and its audit
 * entry commit in one transaction, so the log shows exactly the changes that happened.
 */
export const consoleWebhooksRouter = router({
  /** The event types an endpoint can subscribe to (the form's checkboxes). */
  eventTypes: sessionProcedure.query(() => [...CASE_EVENT_TYPES]),

  list: sessionProcedure.query(async ({ ctx }) =>
    (await listEndpoints(ctx.db, ctx.scope)).map(toEndpointWire),
  ),

  get: sessionProcedure
    .input(endpointId)
    .query(async ({ ctx, input }) => toEndpointWire(await getEndpoint(ctx.db, ctx.scope, input.id))),

  /** The answer carries the signing secret: the one time it is shown. */
  create: managerProcedure.input(createEndpointInput).mutation(async ({ ctx, input }) => {
    const row = await auditedChange(
      ctx,
      (tx) => createEndpoint(tx, ctx.scope, input, endpointPolicy(ctx)),
      webhookAudit.endpointCreated,
    );
    return { ...toEndpointWire(row), secret: row.secret };
  }),

  update: managerProcedure.input(updateEndpointInput).mutation(async ({ ctx, input }) => {
    const { id, ...changes } = input;
    const row = await auditedChange(
      ctx,
      (tx) => updateEndpoint(tx, ctx.scope, id, changes, endpointPolicy(ctx)),
      (row) => webhookAudit.endpointUpdated(row, changes),
    );
    return toEndpointWire(row);
  }),

  delete: managerProcedure.input(endpointId).mutation(async ({ ctx, input }) => {
    await auditedChange(
      ctx,
      async (tx) => {
        const endpoint = await getEndpoint(tx, ctx.scope, input.id);
        await deleteEndpoint(tx, ctx.scope, endpoint.id);
        return endpoint;
      },
      webhookAudit.endpointDeleted,
    );
    return { deleted: true };
  }),

  /** The old secret stops working at once; the new one is shown this once. */
  rotateSecret: managerProcedure.input(endpointId).mutation(async ({ ctx, input }) => {
    const row = await auditedChange(
      ctx,
      (tx) => rotateEndpointSecret(tx, ctx.scope, input.id, ctx.clock),
      webhookAudit.secretRotated,
    );
    return { ...toEndpointWire(row), secret: row.secret };
  }),

  /** Shows the current secret again, after the user re-enters their password. */
  revealSecret: managerProcedure
    .input(endpointId.extend({ password: z.string().min(1, 'Enter your password.').max(200) }))
    .mutation(async ({ ctx, input }) => {
      const endpoint = await getEndpoint(ctx.db, ctx.scope, input.id);
      if ((await readPasswordHash(ctx.db, ctx.user.id)) === null) {
        throw new AppError(
          'FORBIDDEN',
          'You sign in by e-mail link only: set a password (Password page) first.',
        );
      }
      await confirmCurrentPassword(ctx, input.password);
      await recordAudit(ctx.db, {
        at: ctx.clock(),
        teamId: ctx.teamId,
        actor: ctx.actor,
        action: 'webhook_endpoint.secret_revealed',
        target: endpoint.id,
      });
      return { id: endpoint.id, secret: endpoint.secret };
    }),

  sendTest: managerProcedure.input(endpointId).mutation(async ({ ctx, input }) =>
    toDeliveryWire(
      await auditedChange(
        ctx,
        (tx) => sendTestPing(tx, ctx.scope, input.id, ctx),
        (delivery) => webhookAudit.testSent(input.id, delivery),
      ),
    ),
  ),

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
    .mutation(async ({ ctx, input }) =>
      toDeliveryWire(
        await auditedChange(
          ctx,
          (tx) => retryDelivery(tx, ctx.scope, input.id, ctx),
          webhookAudit.deliveryRetried,
        ),
      ),
    ),
});

import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange, recordAudit } from '@/server/audit/record-audit';
import { confirmCurrentPassword } from '@/server/auth/reauthentication';
import { readPasswordHash } from '@/server/auth/team-members';
import type { DataScope } from '@/server/platform/data-scope';
import type { Env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { webhookAudit } from '@/server/webhooks/audit-entries';
import { recoverDeliveries, retryDelivery } from '@/server/webhooks/deliveries';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointPolicy,
  getEndpoint,
  rotateEndpointSecret,
  sendTestPing,
  updateEndpoint,
} from '@/server/webhooks/manage-endpoints';

/** A team's webhook changes: in one team and one mode, under the operator's destination policy. */
export interface WebhookActionContext extends TeamActionContext {
  scope: DataScope;
  env: Pick<Env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>;
}

function policy(ctx: WebhookActionContext): EndpointPolicy & Pick<TeamActionContext, 'clock' | 'jobs'> {
  return { clock: ctx.clock, jobs: ctx.jobs, allowPrivateNetworks: ctx.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS };
}

export type EndpointChanges = {
  url?: string;
  events?: string[];
  description?: string;
  is_active?: boolean;
};

/**
 * A team's actions on its webhook endpoints and deliveries, each committed with its audit entry:
 * the REST API and the console publish the same ones (the same validation), whoever the actor.
 */
export const webhookActions = {
  /** The answer carries the signing secret, the one time it is shown. */
  createEndpoint: (
    ctx: WebhookActionContext,
    input: { url?: string; events?: string[]; description?: string },
  ) =>
    auditedChange(
      ctx,
      (tx) => createEndpoint(tx, ctx.scope, input, policy(ctx)),
      webhookAudit.endpointCreated,
    ),

  updateEndpoint: (ctx: WebhookActionContext, id: string, changes: EndpointChanges) =>
    auditedChange(
      ctx,
      (tx) => updateEndpoint(tx, ctx.scope, id, changes, policy(ctx)),
      (row) => webhookAudit.endpointUpdated(row, changes),
    ),

  deleteEndpoint: (ctx: WebhookActionContext, id: string) =>
    auditedChange(
      ctx,
      async (tx) => {
        const endpoint = await getEndpoint(tx, ctx.scope, id);
        await deleteEndpoint(tx, ctx.scope, endpoint.id);
        return endpoint;
      },
      webhookAudit.endpointDeleted,
    ),

  /** The old secret stops working at once; the new one is in the answer, once. */
  rotateSecret: (ctx: WebhookActionContext, id: string) =>
    auditedChange(
      ctx,
      (tx) => rotateEndpointSecret(tx, ctx.scope, id, ctx.clock),
      webhookAudit.secretRotated,
    ),

  /** A `ping`, attempted even while the endpoint is disabled. */
  sendTest: (ctx: WebhookActionContext, id: string) =>
    auditedChange(
      ctx,
      (tx) => sendTestPing(tx, ctx.scope, id, ctx),
      (delivery) => webhookAudit.testSent(id, delivery),
    ),

  /** Every failed or dead-lettered delivery of the endpoint since `since`, queued again. */
  recover: (ctx: WebhookActionContext, id: string, since: string) =>
    auditedChange(
      ctx,
      (tx) => recoverDeliveries(tx, ctx.scope, id, new Date(since), ctx),
      (result) => webhookAudit.recovered(id, since, result.queued),
    ),

  retryDelivery: (ctx: WebhookActionContext, id: string) =>
    auditedChange(ctx, (tx) => retryDelivery(tx, ctx.scope, id, ctx), webhookAudit.deliveryRetried),

  /**
   * Shows an endpoint's current secret again, to a console user who re-enters their password
   * (wrong guesses spend the account's password budgets); the reveal is audited.
   */
  revealSecret: async (
    ctx: WebhookActionContext & {
      rateLimiters: RateLimiters;
      clientAddress: string;
      user: { id: string; email: string };
    },
    id: string,
    password: string,
  ) => {
    const endpoint = await getEndpoint(ctx.db, ctx.scope, id);
    if ((await readPasswordHash(ctx.db, ctx.user.id)) === null) {
      throw new AppError(
        'FORBIDDEN',
        'You sign in by e-mail link only: set a password (Password page) first.',
      );
    }
    await confirmCurrentPassword(ctx, password);
    await recordAudit(ctx.db, {
      at: ctx.clock(),
      teamId: ctx.teamId,
      actor: ctx.actor,
      action: 'webhook_endpoint.secret_revealed',
      target: endpoint.id,
    });
    return endpoint;
  },
};

import type { TeamActionContext } from '@/server/application/team-action-context';

/** Who changes a team's clients: a console user, or the operator (whose CLI queues no jobs). */
type ClientContext = Pick<TeamActionContext, 'db' | 'teamId' | 'actor' | 'clock'>;

import { type AuditEntry, auditedChange } from '@/server/audit/record-audit';
import {
  createClient,
  deleteClient,
  findTeamClientOrFail,
  type OidcClient,
  rotateClientSecret,
} from '@/server/oidc/oidc-clients';
import type { CreateClientInput } from './wire';

function clientAudit(action: string, details: (client: OidcClient) => Record<string, unknown> = () => ({})) {
  return ({ client }: { client: OidcClient }): AuditEntry => ({
    action,
    target: client.id,
    details: { name: client.name, livemode: client.livemode, ...details(client) },
  });
}

/**
 * A team's identity-provider clients (the relying parties of the OpenID provider), each change
 * committed with its audit entry: the console and the operator CLI share them. A secret is
 * answered once, at creation and at rotation, and kept only as a hash.
 */
export const clientActions = {
  create: (ctx: ClientContext, input: CreateClientInput): Promise<{ client: OidcClient; secret: string }> =>
    auditedChange(
      ctx,
      (tx) =>
        createClient(
          tx,
          ctx.teamId,
          {
            name: input.name,
            redirectUris: input.redirect_uris,
            defaultTemplate: input.default_template ?? null,
            livemode: input.mode === 'live',
          },
          ctx.clock(),
        ),
      clientAudit('oidc_client.created', (client) => ({
        redirect_uris: client.redirectUris,
        default_template: client.defaultTemplate,
      })),
    ),

  rotateSecret: (
    ctx: ClientContext,
    clientId: string,
    graceSeconds: number,
  ): Promise<{ client: OidcClient; secret: string }> =>
    auditedChange(
      ctx,
      async (tx) =>
        rotateClientSecret(
          tx,
          await findTeamClientOrFail(tx, ctx.teamId, clientId),
          graceSeconds,
          ctx.clock(),
        ),
      clientAudit('oidc_client.secret_rotated', () => ({ grace_seconds: graceSeconds })),
    ),

  delete: (ctx: ClientContext, clientId: string): Promise<{ client: OidcClient }> =>
    auditedChange(
      ctx,
      async (tx) => {
        const client = await findTeamClientOrFail(tx, ctx.teamId, clientId);
        await deleteClient(tx, client);
        return { client };
      },
      clientAudit('oidc_client.deleted'),
    ),
};

import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { clientActions } from '@/server/application/oidc/client-actions';
import {
  clientIdInput,
  createClientInput,
  rotateClientSecretInput,
  toClientWire,
} from '@/server/application/oidc/wire';
import { providerEndpoints } from '@/server/oidc/discovery';
import { listClients } from '@/server/oidc/oidc-clients';

/**
 * The team's identity-provider clients in the console: every member reads them; owners and admins
 * register, rotate and remove them. A secret is answered once, at creation and at rotation.
 */
export const consoleOidcClientsRouter = router({
  list: sessionProcedure.query(async ({ ctx }) => ({
    results: (await listClients(ctx.db, ctx.teamId)).map(toClientWire),
    /** What an identity provider's settings ask for besides the client's id and secret. */
    provider: providerEndpoints(ctx.env.BASE_URL),
  })),
  create: managerProcedure.input(createClientInput).mutation(async ({ ctx, input }) => {
    const { client, secret } = await clientActions.create(ctx, input);
    return { ...toClientWire(client), client_secret: secret };
  }),
  rotateSecret: managerProcedure.input(rotateClientSecretInput).mutation(async ({ ctx, input }) => {
    const { client, secret } = await clientActions.rotateSecret(ctx, input.client_id, input.grace_seconds);
    return { ...toClientWire(client), client_secret: secret };
  }),
  delete: managerProcedure.input(clientIdInput).mutation(async ({ ctx, input }) => {
    await clientActions.delete(ctx, input.client_id);
    return { deleted: true };
  }),
});

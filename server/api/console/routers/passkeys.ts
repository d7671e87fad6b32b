import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { passkeyActions } from '@/server/application/passkeys/passkey-actions';
import { listPasskeysInput, passkeyIdInput } from '@/server/application/passkeys/wire';

/**
 * A subject's passkeys in the console (on a case's page), in the mode its switch shows: every
 * member sees them, owners and admins revoke one, through the same actions as the API's (audited,
 * with `passkey.revoked`).
 */
export const consolePasskeysRouter = router({
  list: sessionProcedure
    .input(listPasskeysInput)
    .query(async ({ ctx, input }) => ({ results: await passkeyActions.list(ctx, input.subject_email) })),
  revoke: managerProcedure.input(passkeyIdInput).mutation(async ({ ctx, input }) => {
    await passkeyActions.revoke(ctx, input.id);
    return { revoked: true };
  }),
});

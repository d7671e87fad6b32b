import { z } from 'zod';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { passkeyActions } from '@/server/application/passkeys/passkey-actions';
import { listPasskeysInput, passkeyIdInput, passkeyListOutput } from '@/server/application/passkeys/wire';

const TAGS = ['Passkeys'];

export const passkeysRouter = router({
  list: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/passkeys/',
        tags: TAGS,
        summary: 'List a subject’s passkeys',
        description:
          'The passkeys a subject saved at the end of the team’s verified cases that offered one, in the key’s mode (a test key sees test passkeys only). A case with the method `passkey` verifies the subject by one of them alone. The public key is never shown.',
      },
    })
    .input(listPasskeysInput)
    .output(passkeyListOutput)
    .query(async ({ ctx, input }) => ({ results: await passkeyActions.list(ctx, input.subject_email) })),

  revoke: apiKeyProcedure
    .meta({
      successStatus: 204,
      openapi: {
        method: 'DELETE',
        path: '/passkeys/{id}/',
        tags: TAGS,
        summary: 'Revoke a passkey',
        description:
          'No case can verify the subject by it any more (a case already asking for `passkey` then fails its step if no other passkey is left). Audited, and `passkey.revoked` is sent to the endpoints subscribed to it.',
      },
    })
    .input(passkeyIdInput)
    .output(z.null())
    .mutation(async ({ ctx, input }) => {
      await passkeyActions.revoke(ctx, input.id);
      return null;
    }),
});

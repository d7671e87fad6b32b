import { z } from 'zod';
import { MAX_SECRET_GRACE_SECONDS, type OidcClient } from '@/server/oidc/oidc-clients';
import { requiredText } from '@/server/platform/wire-fields';
import { templateNameInput } from '@/server/templates/template-name';

export const createClientInput = z.strictObject({
  name: requiredText(100),
  redirect_uris: z.array(z.string().max(2000)).min(1).max(10),
  default_template: templateNameInput.nullish(),
  mode: z.enum(['test', 'live']).default('test'),
});

export type CreateClientInput = z.infer<typeof createClientInput>;

export const clientIdInput = z.object({ client_id: z.string().max(64) });

export const rotateClientSecretInput = clientIdInput.extend({
  /** How long the secret it replaces keeps working (0: not at all). */
  grace_seconds: z.number().int().min(0).max(MAX_SECRET_GRACE_SECONDS),
});

export function toClientWire(client: OidcClient) {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    default_template: client.defaultTemplate,
    mode: client.livemode ? ('live' as const) : ('test' as const),
    secret_hint: client.secretHint,
    previous_secret_expires_at: client.previousSecretExpiresAt?.toISOString() ?? null,
    created_at: client.createdAt.toISOString(),
  };
}

export type ClientWire = ReturnType<typeof toClientWire>;

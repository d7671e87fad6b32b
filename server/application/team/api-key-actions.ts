import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import { createApiKey, revokeApiKey } from '@/server/auth/api-keys';
import type { Mode } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';

/** A team's API keys, each change committed with its audit entry (the key itself is never logged). */
export const apiKeyActions = {
  /** The full key is in this answer only; only its hash is stored. */
  create: (ctx: TeamActionContext, input: { name: string; mode: Mode }) =>
    auditedChange(
      ctx,
      (tx) => createApiKey(tx, { teamId: ctx.teamId, name: input.name, mode: input.mode }),
      (key) => ({
        action: 'api_key.created',
        target: key.id,
        details: { name: key.name, prefix: key.prefix, last_four: key.lastFour, mode: key.mode },
      }),
    ),

  /** Revoked at once: the key's next request is refused. Another team's key is not found. */
  revoke: (ctx: TeamActionContext, keyId: string) =>
    auditedChange(
      ctx,
      async (tx) => {
        const key = await revokeApiKey(tx, { keyId, teamId: ctx.teamId }, ctx.clock);
        if (!key) throw new AppError('NOT_FOUND', 'No such API key in this team.');
        return key;
      },
      (key) => ({
        action: 'api_key.revoked',
        target: keyId,
        details: { name: key.name, prefix: key.prefix, last_four: key.lastFour },
      }),
    ),
};

import type { EvidenceContext } from '@/server/application/cases/download-evidence';
import type { TeamActionContext } from '@/server/application/team-action-context';
import type { DataScope } from '@/server/platform/data-scope';
import type { Env } from '@/server/platform/env';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';

/** What an evidence download needs beyond the caller: the issuer (BASE_URL) and the signing keys' key. */
export function evidenceContext(ctx: TeamActionContext & { scope: DataScope; env: Env }): EvidenceContext {
  return {
    ...ctx,
    issuer: ctx.env.BASE_URL,
    kek: () => signingKeyEncryptionKey(ctx.db, ctx.env.KEYS_SECRET),
  };
}

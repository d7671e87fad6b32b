import { passkeys } from '@/db/schema';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import type { DataScope } from '@/server/platform/data-scope';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { recordEvent } from '@/server/platform/outbox/record-events';
import { subjectPasskeys, takePasskey } from '@/server/verification/methods/passkey/ceremonies';
import { type PasskeyWire, toPasskeyWire } from './wire';

/** Who manages a team's passkeys: an API key (or a console user) acting in one team and mode. */
export interface PasskeyActionContext extends TeamActionContext {
  scope: DataScope;
}

export const passkeyActions = {
  /** A subject's passkeys in the key's team and mode, oldest first. */
  list: async (ctx: PasskeyActionContext, subjectEmail: string): Promise<PasskeyWire[]> =>
    (await subjectPasskeys(ctx.db, { ...ctx.scope, subjectEmail })).map(toPasskeyWire),

  /**
   * Revokes one: its row goes, `passkey.revoked` is recorded (about the case that enrolled it, so
   * that case's redaction erases the address in it too) and the change is audited, in one
   * transaction. Another team's or mode's passkey is not found.
   */
  revoke: async (ctx: PasskeyActionContext, id: string): Promise<void> => {
    await auditedChange(
      ctx,
      async (tx) => {
        const revoked = await takePasskey(tx, ctx.scope, id);
        if (!revoked) throw await notFoundInScope(tx, passkeys, ctx.scope, id, { noun: 'passkey' });
        await recordEvent(tx, ctx.jobs, {
          scope: ctx.scope,
          type: 'passkey.revoked',
          data: {
            passkey_id: revoked.id,
            case_id: revoked.enrollingCaseId,
            subject_email: revoked.subjectEmail,
          },
          caseId: revoked.enrollingCaseId,
          now: ctx.clock(),
        });
        return revoked;
      },
      (revoked) => ({
        action: 'passkey.revoked',
        target: revoked.id,
        details: { livemode: ctx.scope.livemode, enrolling_case_id: revoked.enrollingCaseId },
      }),
    );
  },
};

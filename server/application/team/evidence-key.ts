import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import { teamEvidenceKey } from '@/server/teams/team-secrets';

/**
 * The team's evidence key (base64url), for an owner to hand to the team's auditor: with it and a
 * value, the auditor checks the `hmac:` that stands for the value in the audit chain and in the
 * evidence records of redacted cases. Each reveal is audited.
 */
export function revealEvidenceKey(ctx: TeamActionContext): Promise<string> {
  return auditedChange(
    ctx,
    async (tx) => (await teamEvidenceKey(tx, ctx.teamId)).toString('base64url'),
    () => ({ action: 'team.evidence_key_revealed' }),
  );
}

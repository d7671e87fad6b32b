import type { TeamRole } from '@/db/schema';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import { inviteMember, type PendingInvitation, revokeInvitation } from '@/server/auth/team-invitations';
import { changeMemberRole, removeMember } from '@/server/auth/team-members';
import type { Env } from '@/server/platform/env';
import type { RateLimiters } from '@/server/rate-limits/limiters';

/** An owner or admin managing the team's people: what they may do depends on their own role. */
export interface MemberActionContext extends TeamActionContext {
  role: TeamRole;
}

/**
 * The team's people, each change committed with its audit entry. The domain rules (who may make
 * whom an owner, the last owner stays) live in server/auth; these add the transaction and the log.
 */
export const membershipActions = {
  /**
   * Invites a person by e-mail: they join when they accept, within 7 days (at most 20 invitations
   * per team a day). The invitation's mail links to the console at `BASE_URL`.
   */
  invite: (
    ctx: MemberActionContext & {
      teamName: string;
      user: { id: string; email: string };
      rateLimiters: RateLimiters;
      clientAddress: string;
      env: Pick<Env, 'BASE_URL'>;
    },
    input: { email: string; role: TeamRole },
  ): Promise<PendingInvitation> =>
    auditedChange(
      ctx,
      (tx) =>
        inviteMember(
          tx,
          {
            rateLimiters: ctx.rateLimiters,
            clientAddress: ctx.clientAddress,
            baseUrl: ctx.env.BASE_URL,
            now: ctx.clock(),
          },
          {
            teamId: ctx.teamId,
            teamName: ctx.teamName,
            email: input.email,
            role: input.role,
            inviter: { userId: ctx.user.id, email: ctx.user.email },
          },
          ctx.role,
        ),
      (sent) => ({
        action: 'member.invited',
        target: sent.email,
        details: { role: sent.role, invitation_id: sent.id, expires_at: sent.expiresAt.toISOString() },
      }),
    ),

  revokeInvitation: (ctx: MemberActionContext, invitationId: string) =>
    auditedChange(
      ctx,
      (tx) => revokeInvitation(tx, { teamId: ctx.teamId, invitationId, now: ctx.clock() }, ctx.role),
      (revoked) => ({
        action: 'member.invitation_revoked',
        target: revoked.email,
        details: { role: revoked.role, invitation_id: invitationId },
      }),
    ),

  changeRole: (ctx: MemberActionContext, input: { userId: string; role: TeamRole }) =>
    auditedChange(
      ctx,
      (tx) => changeMemberRole(tx, { teamId: ctx.teamId, userId: input.userId, role: input.role }, ctx.role),
      () => ({ action: 'member.role_changed', target: input.userId, details: { role: input.role } }),
    ),

  remove: (ctx: MemberActionContext, userId: string) =>
    auditedChange(
      ctx,
      (tx) => removeMember(tx, { teamId: ctx.teamId, userId }, ctx.role),
      (removed) => ({ action: 'member.removed', target: removed.email }),
    ),
};

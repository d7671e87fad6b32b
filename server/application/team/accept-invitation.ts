import type { Db } from '@/db/client';
import { type AuditActor, recordAudit } from '@/server/audit/record-audit';
import { signInLinkInPlace } from '@/server/auth/console-auth';
import {
  acceptInvitation as acceptAsMember,
  acceptInvitationAsNewUser as acceptAsNewAccount,
  type InvitationView,
} from '@/server/auth/team-invitations';
import type { Clock } from '@/server/platform/clock';
import type { Env } from '@/server/platform/env';

function joinedEntry(invitation: InvitationView) {
  return {
    action: 'member.joined',
    target: invitation.email,
    details: { role: invitation.role, invitation_id: invitation.id },
  };
}

/** The invitee, signed in as the invited address, joins the team (audited as themselves). */
export function acceptInvitation(
  ctx: { db: Db; clock: Clock; actor: AuditActor; user: { id: string; email: string } },
  token: string,
): Promise<InvitationView> {
  return ctx.db.transaction(async (tx) => {
    const invitation = await acceptAsMember(tx, { token, user: ctx.user, now: ctx.clock() });
    await recordAudit(tx, {
      teamId: invitation.teamId,
      actor: ctx.actor,
      at: ctx.clock(),
      ...joinedEntry(invitation),
    });
    return invitation;
  });
}

/**
 * An invitee without an account: the link they opened came to their mailbox, so accepting makes
 * their account and joins the team (audited as the new account, from where the request came),
 * and answers with a sign-in link (once, 15 minutes) for the page to open at once. The link is
 * better-auth's, asked for with the request's headers as it asks for every link.
 */
export async function acceptInvitationAsNewUser(
  ctx: {
    db: Db;
    clock: Clock;
    env: Env;
    clientAddress: string;
    requestHeaders: Headers;
  },
  token: string,
): Promise<InvitationView & { signInUrl: string }> {
  const joined = await ctx.db.transaction(async (tx) => {
    const invitation = await acceptAsNewAccount(tx, { token, now: ctx.clock() });
    await recordAudit(tx, {
      teamId: invitation.teamId,
      actor: {
        userId: invitation.userId,
        email: invitation.email,
        ipAddress: ctx.clientAddress,
        userAgent: ctx.requestHeaders.get('user-agent'),
      },
      at: ctx.clock(),
      ...joinedEntry(invitation),
    });
    return invitation;
  });
  const signInUrl = await signInLinkInPlace(ctx.db, ctx.env, {
    email: joined.email,
    callbackPath: '/console',
    headers: ctx.requestHeaders,
  });
  return { ...joined, signInUrl };
}

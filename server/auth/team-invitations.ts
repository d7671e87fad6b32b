import { utc } from '@date-fns/utc';
import { addDays } from 'date-fns';
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import type { Queryable, Tx } from '@/db/client';
import { authUsers, type TeamRole, teamInvitations, teamMembers, teams } from '@/db/schema';
import { sha256Hex } from '@/server/platform/crypto';
import { AppError } from '@/server/platform/errors';
import { randomBase62 } from '@/server/platform/ids';
import { enqueueMail } from '@/server/platform/outbox/enqueue-mail';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { findUserByEmail, insertUser, normaliseEmail } from './team-members';

/** How long an invitation waits for its invitee, like the CLI's one-time password. */
export const INVITATION_DAYS = 7;

/** Where an invitation's link leads: the console page that shows it and takes the answer. */
export const INVITATION_PATH = '/console/invitation';

export function invitationUrl(baseUrl: string, token: string): string {
  const url = new URL(INVITATION_PATH, baseUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: TeamRole;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

const INVALID = 'This invitation is not valid: it expired, was withdrawn, or was already accepted.';

/** Neither accepted nor revoked, and not past its 7 days. */
const open = (now: Date) =>
  and(
    isNull(teamInvitations.acceptedAt),
    isNull(teamInvitations.revokedAt),
    gt(teamInvitations.expiresAt, now),
  );

function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function invitationMail(input: {
  to: string;
  url: string;
  teamName: string;
  role: TeamRole;
  inviter: string;
  expiresAt: Date;
  hasAccount: boolean;
}) {
  const howTo = input.hasAccount
    ? `To accept, open this link and sign in as ${input.to}:\n\n${input.url}\n\nThe invitation is valid until ${formatUtc(input.expiresAt)}.`
    : `To accept, open this link:\n\n${input.url}\n\nAccepting makes you a console account for this address and signs you in. The link works once, until ${formatUtc(input.expiresAt)}.`;
  return {
    to: input.to,
    subject: `You are invited to the Vouch console of ${input.teamName}`,
    text: `${input.inviter} invited you to join ${input.teamName} on the Vouch console as ${input.role}.\n\n${howTo}\n\nIf you do not want to join, ignore this e-mail: nothing changes until you accept.`,
  };
}

/**
 * Invites a person to the team: they become a member only when they accept (signed in as that
 * address) within 7 days. Someone already invited gets a new invitation in place of the old one.
 * A team sends at most 20 a day; a mail whose link also signs its invitee in (no account yet)
 * spends the invitee's sign-in link budgets, as a requested link does. Call inside a transaction:
 * the invitation and its mail commit together.
 */
export async function inviteMember(
  tx: Tx,
  deps: { rateLimiters: RateLimiters; clientAddress: string; baseUrl: string; now: Date },
  input: {
    teamId: string;
    teamName: string;
    email: string;
    role: TeamRole;
    inviter: { userId: string; email: string };
  },
  actorRole: TeamRole,
): Promise<PendingInvitation> {
  if (input.role === 'owner' && actorRole !== 'owner') {
    throw new AppError('FORBIDDEN', 'Only an owner can make someone an owner.');
  }
  const email = normaliseEmail(input.email);
  const invitee = await findUserByEmail(tx, email);
  if (invitee) {
    const [member] = await tx
      .select({ userId: teamMembers.userId })
      .from(teamMembers)
      .where(and(eq(teamMembers.teamId, input.teamId), eq(teamMembers.userId, invitee.id)));
    if (member) throw new AppError('VALIDATION_ERROR', `${email} is already a member of this team.`);
  }
  await deps.rateLimiters.consume('team_invitations', input.teamId);
  await tx
    .update(teamInvitations)
    .set({ revokedAt: deps.now })
    .where(
      and(
        eq(teamInvitations.teamId, input.teamId),
        eq(teamInvitations.email, email),
        isNull(teamInvitations.acceptedAt),
        isNull(teamInvitations.revokedAt),
      ),
    );
  const token = randomBase62(32);
  const expiresAt = addDays(deps.now, INVITATION_DAYS, { in: utc });
  const [row] = await tx
    .insert(teamInvitations)
    .values({
      teamId: input.teamId,
      email,
      role: input.role,
      invitedByUserId: input.inviter.userId,
      tokenHash: sha256Hex(token),
      createdAt: deps.now,
      expiresAt,
    })
    // Only a concurrent invitation of the same person can conflict (one open per person and team).
    .onConflictDoNothing()
    .returning();
  if (!row) throw new AppError('VALIDATION_ERROR', `${email} was invited a moment ago.`);
  const mail = () =>
    enqueueMail(
      tx,
      invitationMail({
        to: email,
        url: invitationUrl(deps.baseUrl, token),
        teamName: input.teamName,
        role: input.role,
        inviter: input.inviter.email,
        expiresAt,
        hasAccount: invitee !== null,
      }),
    );
  if (invitee) await mail();
  else {
    await deps.rateLimiters.attemptForAccount(
      'sign_in_link',
      { account: email, address: deps.clientAddress },
      mail,
      () => false,
    );
  }
  return {
    id: row.id,
    email,
    role: row.role,
    invitedBy: input.inviter.email,
    createdAt: row.createdAt,
    expiresAt,
  };
}

/** The team's invitations still waiting for an answer, oldest first. */
export async function listPendingInvitations(
  db: Queryable,
  teamId: string,
  now: Date,
): Promise<PendingInvitation[]> {
  return db
    .select({
      id: teamInvitations.id,
      email: teamInvitations.email,
      role: teamInvitations.role,
      invitedBy: authUsers.email,
      createdAt: teamInvitations.createdAt,
      expiresAt: teamInvitations.expiresAt,
    })
    .from(teamInvitations)
    .leftJoin(authUsers, eq(authUsers.id, teamInvitations.invitedByUserId))
    .where(and(eq(teamInvitations.teamId, teamId), open(now)))
    .orderBy(asc(teamInvitations.createdAt), asc(teamInvitations.id));
}

/**
 * Withdraws an invitation that was not accepted yet; its link then does nothing. An invitation to
 * become owner is an owner's to withdraw, as an owner is. Call inside a transaction.
 */
export async function revokeInvitation(
  tx: Tx,
  input: { teamId: string; invitationId: string; now: Date },
  actorRole: TeamRole,
): Promise<{ email: string; role: TeamRole }> {
  const [invitation] = await tx
    .select()
    .from(teamInvitations)
    .where(
      and(
        eq(teamInvitations.id, input.invitationId),
        eq(teamInvitations.teamId, input.teamId),
        isNull(teamInvitations.acceptedAt),
        isNull(teamInvitations.revokedAt),
      ),
    )
    .for('update');
  if (!invitation) throw new AppError('NOT_FOUND', 'No such pending invitation in this team.');
  if (invitation.role === 'owner' && actorRole !== 'owner') {
    throw new AppError('FORBIDDEN', 'Only an owner can withdraw an invitation to become owner.');
  }
  await tx.update(teamInvitations).set({ revokedAt: input.now }).where(eq(teamInvitations.id, invitation.id));
  return { email: invitation.email, role: invitation.role };
}

export interface InvitationView {
  id: string;
  teamId: string;
  teamName: string;
  email: string;
  role: TeamRole;
  invitedBy: string | null;
  expiresAt: Date;
}

/** The open invitation an invitation link's token names; the row is locked when `forUpdate`. */
async function openInvitation(
  db: Queryable,
  token: string,
  now: Date,
  forUpdate: boolean,
): Promise<InvitationView | null> {
  const query = db
    .select({
      id: teamInvitations.id,
      teamId: teamInvitations.teamId,
      teamName: teams.name,
      email: teamInvitations.email,
      role: teamInvitations.role,
      invitedBy: authUsers.email,
      expiresAt: teamInvitations.expiresAt,
    })
    .from(teamInvitations)
    .innerJoin(teams, eq(teams.id, teamInvitations.teamId))
    .leftJoin(authUsers, eq(authUsers.id, teamInvitations.invitedByUserId))
    .where(and(eq(teamInvitations.tokenHash, sha256Hex(token)), open(now)));
  const [row] = forUpdate ? await query.for('update', { of: teamInvitations }) : await query;
  return row ?? null;
}

/**
 * What an invitation link offers, for its page: the team, the role, who invited, and whether the
 * invitee has an account already (then they sign in to accept; otherwise accepting signs them in).
 */
export async function showInvitation(
  db: Queryable,
  token: string,
  now: Date,
): Promise<InvitationView & { hasAccount: boolean }> {
  const invitation = await openInvitation(db, token, now, false);
  if (!invitation) throw new AppError('NOT_FOUND', INVALID);
  return { ...invitation, hasAccount: (await findUserByEmail(db, invitation.email)) !== null };
}

async function join(tx: Tx, invitation: InvitationView, userId: string, now: Date): Promise<void> {
  // Someone who became a member since (another invitation) keeps the role they have.
  await tx
    .insert(teamMembers)
    .values({ teamId: invitation.teamId, userId, role: invitation.role })
    .onConflictDoNothing();
  await tx.update(teamInvitations).set({ acceptedAt: now }).where(eq(teamInvitations.id, invitation.id));
}

/**
 * The invitee, signed in as the address the invitation went to, accepts it and becomes a member.
 * Call inside a transaction.
 */
export async function acceptInvitation(
  tx: Tx,
  input: { token: string; user: { id: string; email: string }; now: Date },
): Promise<InvitationView> {
  const invitation = await openInvitation(tx, input.token, input.now, true);
  if (!invitation) throw new AppError('NOT_FOUND', INVALID);
  if (invitation.email !== normaliseEmail(input.user.email)) {
    throw new AppError(
      'FORBIDDEN',
      `This invitation is for ${invitation.email}: sign in with that address to accept it.`,
    );
  }
  await join(tx, invitation, input.user.id, input.now);
  return invitation;
}

/**
 * Accepting an invitation whose invitee has no console account: the link came to their mailbox,
 * which proves the address, so the account is made for it (without a password; they may set one)
 * and joins the team. Someone with an account signs in to accept instead: the link does not stand
 * in for their sign-in. Call inside a transaction.
 */
export async function acceptInvitationAsNewUser(
  tx: Tx,
  input: { token: string; now: Date },
): Promise<InvitationView & { userId: string }> {
  const invitation = await openInvitation(tx, input.token, input.now, true);
  if (!invitation) throw new AppError('NOT_FOUND', INVALID);
  if (await findUserByEmail(tx, invitation.email)) {
    throw new AppError(
      'FORBIDDEN',
      `${invitation.email} has a console account: sign in with it, then accept the invitation.`,
    );
  }
  const user = await insertUser(tx, invitation.email, input.now);
  await join(tx, invitation, user.id, input.now);
  return { ...invitation, userId: user.id };
}

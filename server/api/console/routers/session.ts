import { secondsInDay } from 'date-fns/constants';
import { z } from 'zod';
import { TEAM_ROLES } from '@/db/schema';
import {
  CONSOLE_MODE_COOKIE,
  CONSOLE_TEAM_COOKIE,
  managerProcedure,
  publicProcedure,
  readConsoleLivemode,
  readConsoleTeamCookie,
  router,
  sessionProcedure,
  signedInProcedure,
} from '@/server/api/trpc/init';
import { changePassword } from '@/server/application/session/change-password';
import { acceptInvitation, acceptInvitationAsNewUser } from '@/server/application/team/accept-invitation';
import { apiKeyActions } from '@/server/application/team/api-key-actions';
import { membershipActions } from '@/server/application/team/membership-actions';
import { listApiKeys } from '@/server/auth/api-keys';
import { MIN_PASSWORD_LENGTH } from '@/server/auth/console-auth';
import {
  type InvitationView,
  listPendingInvitations,
  type PendingInvitation,
  showInvitation,
} from '@/server/auth/team-invitations';
import {
  canManage,
  listMembers,
  listUserTeams,
  passwordChangeRequired,
  readPasswordHash,
  resolveMembership,
} from '@/server/auth/team-members';
import { setCookieHeader } from '@/server/platform/cookies';
import { modeOf } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { liveStandIns } from '@/server/platform/stand-ins';

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** The console's own choices (team, mode) are remembered for 365 days. */
function consoleCookie(env: { BASE_URL: string }, name: string, value: string): string {
  return setCookieHeader(name, value, {
    path: '/',
    maxAgeSeconds: 365 * secondsInDay,
    secure: env.BASE_URL.startsWith('https:'),
  });
}

/** Makes the console act on `teamId` from the next call on (membership is checked on every call). */
function rememberTeam(ctx: { env: { BASE_URL: string }; responseHeaders: Headers }, teamId: string): void {
  ctx.responseHeaders.append('Set-Cookie', consoleCookie(ctx.env, CONSOLE_TEAM_COOKIE, teamId));
}

const sessionRouter = router({
  /** Who is signed in, their teams, and whether a one-time password must be replaced first. */
  me: signedInProcedure.query(async ({ ctx }) => {
    const teams = await listUserTeams(ctx.db, ctx.user.id);
    const current = await resolveMembership(ctx.db, ctx.user.id, readConsoleTeamCookie(ctx.requestHeaders));
    return {
      user: ctx.user,
      password_change_required: await passwordChangeRequired(ctx.db, ctx.user.id),
      has_password: (await readPasswordHash(ctx.db, ctx.user.id)) !== null,
      teams: teams.map((t) => ({ team_id: t.teamId, team_name: t.teamName, role: t.role })),
      /**
       * The dev mailbox, shown to owners and admins, keeps every test-mode case's mails and text
       * messages, and live ones too while there is no SMTP (or the dev SMS transport is used).
       */
      dev_mailbox: current !== null && canManage(current.role),
      /** The stand-ins serving live traffic (development only), for the console's banner. */
      stand_ins: liveStandIns(ctx.env).map((s) => s.description),
      current_team: current
        ? { team_id: current.teamId, team_name: current.teamName, role: current.role }
        : null,
      /** Which mode's data the console shows and makes (the live/test switch). */
      mode: modeOf(readConsoleLivemode(ctx.requestHeaders)),
    };
  }),

  /** The live/test switch: which mode's cases, endpoints, deliveries and events the console shows. */
  chooseMode: signedInProcedure
    .input(z.object({ mode: z.enum(['live', 'test']) }))
    .mutation(({ ctx, input }) => {
      ctx.responseHeaders.append('Set-Cookie', consoleCookie(ctx.env, CONSOLE_MODE_COOKIE, input.mode));
      return { mode: input.mode };
    }),

  /** Remembers which of the user's teams the console acts on (checked again on every call). */
  chooseTeam: signedInProcedure.input(z.object({ team_id: z.uuid() })).mutation(async ({ ctx, input }) => {
    const teams = await listUserTeams(ctx.db, ctx.user.id);
    if (!teams.some((t) => t.teamId === input.team_id)) {
      throw new AppError('FORBIDDEN', 'You are not a member of that team.');
    }
    rememberTeam(ctx, input.team_id);
    return { team_id: input.team_id };
  }),

  /**
   * Sets a new password (replacing the CLI's one-time password, or adding one to a link-only
   * account). A stolen session must not be enough: a user with a password re-enters it; a
   * link-only user must have signed in within the last 10 minutes. Every other session of the
   * user ends, so whoever else held one is signed out.
   */
  changePassword: signedInProcedure
    .input(
      z.object({
        current_password: z.string().max(200).optional(),
        new_password: z
          .string()
          .min(MIN_PASSWORD_LENGTH, `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.`)
          .max(128),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await changePassword(
        { ...ctx, sessionHeaders: ctx.requestHeaders },
        { currentPassword: input.current_password, newPassword: input.new_password },
      );
      return { changed: true };
    }),
});

const roleInput = z.enum(TEAM_ROLES);

function pendingWire(invitation: PendingInvitation) {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    invited_by: invitation.invitedBy,
    created_at: invitation.createdAt.toISOString(),
    expires_at: invitation.expiresAt.toISOString(),
  };
}

function joinedWire(invitation: InvitationView) {
  return { team_id: invitation.teamId, team_name: invitation.teamName, role: invitation.role };
}

/** An invitation link's token: whatever was pasted is looked up by its hash, or not found. */
const tokenInput = z.object({ token: z.string().min(1).max(200) });

/**
 * The invitee's side, before they belong to the team: the link's page shows the invitation
 * (anyone holding the link may see it), and its invitee accepts it.
 */
const invitationsRouter = router({
  show: publicProcedure.input(tokenInput).query(async ({ ctx, input }) => {
    const invitation = await showInvitation(ctx.db, input.token, ctx.clock());
    return {
      team_name: invitation.teamName,
      email: invitation.email,
      role: invitation.role,
      invited_by: invitation.invitedBy,
      expires_at: invitation.expiresAt.toISOString(),
      has_account: invitation.hasAccount,
    };
  }),

  /** Signed in as the invited address: join the team. */
  accept: signedInProcedure.input(tokenInput).mutation(async ({ ctx, input }) => {
    const joined = await acceptInvitation(ctx, input.token);
    rememberTeam(ctx, joined.teamId);
    return joinedWire(joined);
  }),

  /**
   * An invitee without an account: the link they opened came to their mailbox, so accepting
   * makes their account, joins the team, and answers with a sign-in link (once, 15 minutes) for
   * the page to open at once.
   */
  acceptAsNewUser: publicProcedure.input(tokenInput).mutation(async ({ ctx, input }) => {
    const joined = await acceptInvitationAsNewUser(ctx, input.token);
    rememberTeam(ctx, joined.teamId);
    return { ...joinedWire(joined), sign_in_url: joined.signInUrl };
  }),
});

const membersRouter = router({
  list: sessionProcedure.query(async ({ ctx }) =>
    (await listMembers(ctx.db, ctx.teamId)).map((m) => ({
      user_id: m.userId,
      email: m.email,
      name: m.name,
      role: m.role,
      joined_at: m.joinedAt.toISOString(),
    })),
  ),

  /** Invitations still waiting for their invitee's answer. */
  invitations: sessionProcedure.query(async ({ ctx }) =>
    (await listPendingInvitations(ctx.db, ctx.teamId, ctx.clock())).map(pendingWire),
  ),

  /**
   * Invites the person by e-mail: they join when they accept, within 7 days (at most 20
   * invitations per team a day).
   */
  invite: managerProcedure
    .input(z.object({ email: z.email('Enter a valid e-mail address.').max(254), role: roleInput }))
    .mutation(async ({ ctx, input }) => {
      const invitation = await membershipActions.invite(ctx, input);
      return pendingWire(invitation);
    }),

  revokeInvitation: managerProcedure.input(z.object({ id: z.uuid() })).mutation(async ({ ctx, input }) => {
    await membershipActions.revokeInvitation(ctx, input.id);
    return { id: input.id, revoked: true };
  }),

  changeRole: managerProcedure
    .input(z.object({ user_id: z.string().min(1).max(100), role: roleInput }))
    .mutation(async ({ ctx, input }) => {
      await membershipActions.changeRole(ctx, { userId: input.user_id, role: input.role });
      return { user_id: input.user_id, role: input.role };
    }),

  remove: managerProcedure
    .input(z.object({ user_id: z.string().min(1).max(100) }))
    .mutation(async ({ ctx, input }) => {
      await membershipActions.remove(ctx, input.user_id);
      return { removed: true };
    }),
});

const keysRouter = router({
  list: sessionProcedure.query(async ({ ctx }) => {
    const rows = await listApiKeys(ctx.db, ctx.teamId);
    return rows.map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      last_four: k.lastFour,
      mode: modeOf(k.livemode),
      created_at: k.createdAt.toISOString(),
      last_used_at: iso(k.lastUsedAt),
      revoked_at: iso(k.revokedAt),
    }));
  }),

  /** The full key is in this answer only; it is never stored. */
  create: managerProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, 'Give the key a name.').max(100),
        mode: z.enum(['live', 'test']).default('live'),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const key = await apiKeyActions.create(ctx, input);
      return {
        id: key.id,
        name: key.name,
        api_key: key.token,
        prefix: key.prefix,
        last_four: key.lastFour,
        mode: key.mode,
        created_at: key.createdAt.toISOString(),
      };
    }),

  revoke: managerProcedure.input(z.object({ id: z.uuid() })).mutation(async ({ ctx, input }) => {
    await apiKeyActions.revoke(ctx, input.id);
    return { id: input.id, revoked: true };
  }),
});

export const consoleAuthRouter = router({
  session: sessionRouter,
  members: membersRouter,
  invitations: invitationsRouter,
  keys: keysRouter,
});

/**
 * Issue 23, finding 11: `members.invite` made anyone with a console account a member of the
 * inviting team at once, without their consent, and mailed them a sign-in link outside the link
 * limits. An invitation now waits for its invitee to accept it (7 days), a team sends at most 20
 * a day, and an invitation that signs its invitee in spends their sign-in link budgets.
 */
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, authUsers, mailOutbox, teamInvitations } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { TEAM_INVITATIONS_PER_DAY } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser, joinAsNewUser, latestInvitationToken } from '@/test/support/invitations';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url, env: { TRUSTED_PROXIES: '127.0.0.1' } });
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

let addresses = 0;
function client(): ConsoleClient {
  addresses += 1;
  return consoleClient(app.baseUrl, { forwardedFor: `198.51.100.${addresses}` });
}

interface Team {
  teamId: string;
  owner: ConsoleClient;
}

async function newTeam(name: string, ownerEmail: string): Promise<Team> {
  const { team, owner } = await createTeam(database.db, { name, adminEmail: ownerEmail }, systemClock);
  const browser = await signInReplacingPassword(
    client(),
    ownerEmail,
    owner.oneTimePassword,
    `${name.toLowerCase()}-owner-password`,
  );
  return { teamId: team.id, owner: browser };
}

async function memberEmails(team: Team): Promise<string[]> {
  const list = await team.owner.query<Array<{ email: string }>>('console.members.list');
  expect(list.status).toBe(200);
  return (list.data ?? []).map((m) => m.email);
}

async function pending(team: Team): Promise<Array<{ id: string; email: string; role: string }>> {
  const list = await team.owner.query<Array<{ id: string; email: string; role: string }>>(
    'console.members.invitations',
  );
  expect(list.status).toBe(200);
  return list.data ?? [];
}

async function mailsTo(email: string): Promise<string[]> {
  const rows = await database.db.select().from(mailOutbox).where(eq(mailOutbox.to, email));
  return rows.map((r) => r.text);
}

async function auditActions(
  teamId: string,
): Promise<Array<{ action: string; actor: string; target: string | null }>> {
  const rows = await database.db.select().from(auditLog).where(eq(auditLog.teamId, teamId));
  return rows.map((r) => ({ action: r.action, actor: r.actorEmail, target: r.target }));
}

let alpha: Team;
let bravo: Team;

beforeAll(async () => {
  alpha = await newTeam('Alpha', 'owner@alpha.test');
  bravo = await newTeam('Bravo', 'owner@bravo.test');
});

describe('someone who already has a console account', () => {
  it('is not a member of the inviting team until they accept, signed in as the invited address', async () => {
    const invited = await bravo.owner.mutate<{ id: string; email: string; role: string; expires_at: string }>(
      'console.members.invite',
      { email: 'Owner@Alpha.test', role: 'admin' },
    );
    expect(invited.status).toBe(200);
    // Not a member: not listed, no access, Alpha's owner sees one team only.
    expect(await memberEmails(bravo)).not.toContain('owner@alpha.test');
    expect((await pending(bravo)).map((i) => i.email)).toEqual(['owner@alpha.test']);
    expect((await alpha.owner.mutate('console.session.chooseTeam', { team_id: bravo.teamId })).status).toBe(
      403,
    );
    const me = await alpha.owner.query<{ teams: unknown[] }>('console.session.me');
    expect(me.data?.teams).toHaveLength(1);

    expect(invited.data).toMatchObject({ email: 'owner@alpha.test', role: 'admin' });
    const days = (Date.parse(invited.data?.expires_at ?? '') - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    // The mail carries the invitation's link, no sign-in link: they sign in as themselves.
    const [mail] = await mailsTo('owner@alpha.test');
    expect(mail).toContain('/console/invitation?token=');
    expect(mail).not.toContain('magic-link');
    const token = await latestInvitationToken(database.db, 'owner@alpha.test');
    const shown = await client().query<{ team_name: string; has_account: boolean; invited_by: string }>(
      'console.invitations.show',
      { token },
    );
    expect(shown.data).toMatchObject({
      team_name: 'Bravo',
      has_account: true,
      invited_by: 'owner@bravo.test',
    });

    // The link alone signs no one into an existing account.
    const stranger = client();
    const refused = await stranger.mutate('console.invitations.acceptAsNewUser', { token });
    expect(refused.status).toBe(403);
    expect((await stranger.query('console.session.me')).status).toBe(401);
    // Nor may someone else, signed in, accept it.
    expect((await bravo.owner.mutate('console.invitations.accept', { token })).status).toBe(403);
    expect(await memberEmails(bravo)).not.toContain('owner@alpha.test');

    const accepted = await alpha.owner.mutate('console.invitations.accept', { token });
    expect(accepted.status).toBe(200);
    expect(accepted.data).toEqual({ team_id: bravo.teamId, team_name: 'Bravo', role: 'admin' });
    expect(await memberEmails(bravo)).toContain('owner@alpha.test');
    expect(await pending(bravo)).toEqual([]);
    const after = await alpha.owner.query<{ teams: unknown[]; current_team: { team_id: string } }>(
      'console.session.me',
    );
    expect(after.data?.teams).toHaveLength(2);
    expect(after.data?.current_team.team_id).toBe(bravo.teamId);
    // Once accepted, the link does nothing more.
    expect((await alpha.owner.mutate('console.invitations.accept', { token })).status).toBe(404);

    const audit = await auditActions(bravo.teamId);
    expect(audit).toContainEqual({
      action: 'member.invited',
      actor: 'owner@bravo.test',
      target: 'owner@alpha.test',
    });
    expect(audit).toContainEqual({
      action: 'member.joined',
      actor: 'owner@alpha.test',
      target: 'owner@alpha.test',
    });
    await alpha.owner.mutate('console.session.chooseTeam', { team_id: alpha.teamId });
  });
});

describe('someone without an account', () => {
  it('gets an account only by accepting through the link, which signs them in', async () => {
    const invited = await alpha.owner.mutate('console.members.invite', {
      email: 'new@alpha.test',
      role: 'viewer',
    });
    expect(invited.status).toBe(200);
    expect(await database.db.select().from(authUsers).where(eq(authUsers.email, 'new@alpha.test'))).toEqual(
      [],
    );
    const token = await latestInvitationToken(database.db, 'new@alpha.test');
    expect(
      (await client().query<{ has_account: boolean }>('console.invitations.show', { token })).data
        ?.has_account,
    ).toBe(false);

    const invitee = client();
    await joinAsNewUser(invitee, database.db, 'new@alpha.test');
    const me = await invitee.query<{
      current_team: { team_id: string; role: string };
      has_password: boolean;
    }>('console.session.me');
    expect(me.data?.current_team).toMatchObject({ team_id: alpha.teamId, role: 'viewer' });
    expect(me.data?.has_password).toBe(false);
    expect(await memberEmails(alpha)).toContain('new@alpha.test');
    expect(await auditActions(alpha.teamId)).toContainEqual({
      action: 'member.joined',
      actor: 'new@alpha.test',
      target: 'new@alpha.test',
    });
  });

  it('a viewer cannot invite anyone', async () => {
    const viewer = client();
    await inviteNewUser(alpha.owner, viewer, database.db, { email: 'viewer@alpha.test', role: 'viewer' });
    const refused = await viewer.mutate('console.members.invite', {
      email: 'friend@alpha.test',
      role: 'viewer',
    });
    expect(refused.status).toBe(403);
    expect(refused.error?.data?.appCode).toBe('FORBIDDEN');
    expect(await mailsTo('friend@alpha.test')).toEqual([]);
    expect(
      await database.db.select().from(teamInvitations).where(eq(teamInvitations.email, 'friend@alpha.test')),
    ).toEqual([]);
    // Nor withdraw one.
    await alpha.owner.mutate('console.members.invite', { email: 'later@alpha.test', role: 'viewer' });
    const [invitation] = (await pending(alpha)).filter((i) => i.email === 'later@alpha.test');
    expect((await viewer.mutate('console.members.revokeInvitation', { id: invitation?.id })).status).toBe(
      403,
    );
    // A viewer sees what is pending, as they see the members.
    expect((await viewer.query('console.members.invitations')).status).toBe(200);
  });

  it('each invitation spends the invitee’s sign-in link budget for the inviting address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (await bravo.owner.mutate('console.members.invite', { email: 'often@bravo.test', role: 'viewer' }))
          .status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await mailsTo('often@bravo.test')).toHaveLength(5);
    // Inviting again replaced the invitation each time: one is pending, and only the newest link works.
    expect((await pending(bravo)).filter((i) => i.email === 'often@bravo.test')).toHaveLength(1);
  });
});

describe('an invitation that is no longer valid does nothing', () => {
  it('once expired', async () => {
    await alpha.owner.mutate('console.members.invite', { email: 'expired@alpha.test', role: 'admin' });
    const token = await latestInvitationToken(database.db, 'expired@alpha.test');
    await database.db
      .update(teamInvitations)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(teamInvitations.email, 'expired@alpha.test'));
    expect((await client().query('console.invitations.show', { token })).status).toBe(404);
    const late = client();
    const refused = await late.mutate('console.invitations.acceptAsNewUser', { token });
    expect(refused.status).toBe(404);
    expect((await late.query('console.session.me')).status).toBe(401);
    expect(
      await database.db.select().from(authUsers).where(eq(authUsers.email, 'expired@alpha.test')),
    ).toEqual([]);
    expect((await pending(alpha)).map((i) => i.email)).not.toContain('expired@alpha.test');
  });

  it('once withdrawn (audited), and for an owner-to-be only by an owner', async () => {
    await alpha.owner.mutate('console.members.invite', { email: 'withdrawn@alpha.test', role: 'viewer' });
    const token = await latestInvitationToken(database.db, 'withdrawn@alpha.test');
    const [invitation] = (await pending(alpha)).filter((i) => i.email === 'withdrawn@alpha.test');
    const revoked = await alpha.owner.mutate('console.members.revokeInvitation', { id: invitation?.id });
    expect(revoked.status).toBe(200);
    expect((await client().mutate('console.invitations.acceptAsNewUser', { token })).status).toBe(404);
    expect(await memberEmails(alpha)).not.toContain('withdrawn@alpha.test');
    expect(await auditActions(alpha.teamId)).toContainEqual({
      action: 'member.invitation_revoked',
      actor: 'owner@alpha.test',
      target: 'withdrawn@alpha.test',
    });

    const admin = client();
    await inviteNewUser(alpha.owner, admin, database.db, { email: 'admin@alpha.test', role: 'admin' });
    await alpha.owner.mutate('console.members.invite', { email: 'owner2@alpha.test', role: 'owner' });
    const [ownerInvitation] = (await pending(alpha)).filter((i) => i.email === 'owner2@alpha.test');
    expect((await admin.mutate('console.members.revokeInvitation', { id: ownerInvitation?.id })).status).toBe(
      403,
    );
    expect(
      (await admin.mutate('console.members.invite', { email: 'owner3@alpha.test', role: 'owner' })).status,
    ).toBe(403);
  });
});

describe('a team', () => {
  it(`sends at most ${TEAM_INVITATIONS_PER_DAY} invitations a day; the next is 429 and mails nothing`, async () => {
    const charlie = await newTeam('Charlie', 'owner@charlie.test');
    for (let i = 0; i < TEAM_INVITATIONS_PER_DAY; i++) {
      const sent = await charlie.owner.mutate('console.members.invite', {
        email: `p${i}@charlie.test`,
        role: 'viewer',
      });
      expect(sent.status, `invitation ${i + 1}`).toBe(200);
    }
    const refused = await charlie.owner.mutate('console.members.invite', {
      email: 'one-too-many@charlie.test',
      role: 'viewer',
    });
    expect(refused.status).toBe(429);
    expect(refused.error?.data?.appCode).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    expect(await mailsTo('one-too-many@charlie.test')).toEqual([]);
    const rows = await database.db
      .select()
      .from(teamInvitations)
      .where(
        and(
          eq(teamInvitations.teamId, charlie.teamId),
          eq(teamInvitations.email, 'one-too-many@charlie.test'),
        ),
      );
    expect(rows).toEqual([]);
    expect(await pending(charlie)).toHaveLength(TEAM_INVITATIONS_PER_DAY);
    // Another team is not held back.
    expect(
      (await alpha.owner.mutate('console.members.invite', { email: 'more@alpha.test', role: 'viewer' }))
        .status,
    ).toBe(200);
  });
});

/**
 * Invitations to a team's console (server/auth/team-invitations.ts) against a real PostgreSQL:
 * the mail and its one-time link, one open invitation per person, who may invite or withdraw an
 * owner, accepting as the address invited (with an account, or making one), 7 days, 20 a day.
 */
import { and, desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '@/db/client';
import { mailOutbox, teamInvitations } from '@/db/schema';
import {
  acceptInvitation,
  acceptInvitationAsNewUser,
  INVITATION_DAYS,
  invitationUrl,
  inviteMember,
  listPendingInvitations,
  revokeInvitation,
  showInvitation,
} from '@/server/auth/team-invitations';
import { findUserByEmail, listMembers } from '@/server/auth/team-members';
import { createTeam } from '@/server/teams/manage-teams';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let team: { id: string; name: string };
let owner: { userId: string; email: string };
const now = new Date('2026-11-28T12:00:00.000Z');
let address = 0;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const created = await createTeam(
    database.db,
    { name: 'Invites', adminEmail: 'owner@invites.test' },
    () => now,
  );
  team = { id: created.team.id, name: 'Invites' };
  owner = { userId: created.owner.userId, email: 'owner@invites.test' };
});

afterAll(async () => {
  await inProcess?.close();
});

function invite(
  email: string,
  role: 'owner' | 'admin' | 'viewer',
  actorRole: 'owner' | 'admin' = 'owner',
  at = now,
) {
  address += 1;
  return database.db.transaction((tx) =>
    inviteMember(
      tx,
      {
        rateLimiters: inProcess.rateLimiters,
        clientAddress: `198.51.100.${address}`,
        baseUrl: 'https://console.test',
        now: at,
      },
      { teamId: team.id, teamName: team.name, email, role, inviter: owner },
      actorRole,
    ),
  );
}

/** The link of the last invitation mailed to `to`, and its token. */
async function lastLink(to: string) {
  const [mail] = await database.db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.to, to))
    .orderBy(desc(mailOutbox.createdAt));
  const url =
    mail?.text.match(/https:\/\/console\.test\/console\/invitation\?token=[0-9A-Za-z]{32}/)?.[0] ?? '';
  return { mail, url, token: new URL(url || 'https://x').searchParams.get('token') ?? '' };
}

describe('invitations', () => {
  it('mail a one-time link to the address (kept lower-case), valid 7 days; the link signs a new person in', async () => {
    const pending = await invite('  New.Person@Invites.TEST ', 'admin');
    expect(pending).toMatchObject({
      email: 'new.person@invites.test',
      role: 'admin',
      invitedBy: owner.email,
    });
    expect(pending.expiresAt.toISOString()).toBe(
      new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString(),
    );
    const { mail, url, token } = await lastLink('new.person@invites.test');
    expect(url).toBe(invitationUrl('https://console.test', token));
    expect(mail?.subject).toBe('You are invited to the Vouch console of Invites');
    expect(mail?.text).toBe(
      `owner@invites.test invited you to join Invites on the Vouch console as admin.\n\nTo accept, open this link:\n\n${url}\n\nAccepting makes you a console account for this address and signs you in. The link works once, until 2026-12-05 12:00 UTC.\n\nIf you do not want to join, ignore this e-mail: nothing changes until you accept.`,
    );
    // Only the token's hash is kept.
    const [row] = await database.db.select().from(teamInvitations).where(eq(teamInvitations.id, pending.id));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(await showInvitation(database.db, token, now)).toMatchObject({
      teamId: team.id,
      teamName: 'Invites',
      email: 'new.person@invites.test',
      role: 'admin',
      invitedBy: owner.email,
      hasAccount: false,
    });
    const joined = await database.db.transaction((tx) => acceptInvitationAsNewUser(tx, { token, now }));
    expect(joined.email).toBe('new.person@invites.test');
    expect((await findUserByEmail(database.db, 'new.person@invites.test'))?.id).toBe(joined.userId);
    expect((await listMembers(database.db, team.id)).map((m) => [m.email, m.role])).toContainEqual([
      'new.person@invites.test',
      'admin',
    ]);
    // Once: the link does nothing more.
    await expect(showInvitation(database.db, token, now)).rejects.toMatchObject({
      appCode: 'NOT_FOUND',
      detail: 'This invitation is not valid: it expired, was withdrawn, or was already accepted.',
    });
    await expect(invite('new.person@invites.test', 'viewer')).rejects.toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: 'new.person@invites.test is already a member of this team.',
    });
  });

  it('someone with an account accepts signed in as that address only; the link alone does not sign them in', async () => {
    const other = (
      await createTeam(database.db, { name: 'Elsewhere', adminEmail: 'has@account.test' }, () => now)
    ).owner;
    await invite('has@account.test', 'viewer');
    const { mail, url, token } = await lastLink('has@account.test');
    expect(mail?.text).toContain(
      `To accept, open this link and sign in as has@account.test:\n\n${url}\n\nThe invitation is valid until 2026-12-05 12:00 UTC.`,
    );
    expect((await showInvitation(database.db, token, now)).hasAccount).toBe(true);
    await expect(
      database.db.transaction((tx) => acceptInvitationAsNewUser(tx, { token, now })),
    ).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'has@account.test has a console account: sign in with it, then accept the invitation.',
    });
    await expect(
      database.db.transaction((tx) =>
        acceptInvitation(tx, { token, user: { id: owner.userId, email: owner.email }, now }),
      ),
    ).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'This invitation is for has@account.test: sign in with that address to accept it.',
    });
    const accepted = await database.db.transaction((tx) =>
      acceptInvitation(tx, { token, user: { id: other.userId, email: 'HAS@account.test' }, now }),
    );
    expect(accepted).toMatchObject({ teamId: team.id, role: 'viewer' });
    expect((await listMembers(database.db, team.id)).map((m) => m.email)).toContain('has@account.test');
  });

  it('takes a link once when it is accepted twice at the same moment: the second finds no invitation', async () => {
    /** Two acceptances at once: the first keeps its transaction open until the second has begun. */
    async function together<T>(accept: (tx: Tx) => Promise<T>) {
      let acceptedFirst = () => {};
      const firstAccepted = new Promise<void>((resolve) => {
        acceptedFirst = resolve;
      });
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = database.db.transaction(async (tx) => {
        const result = await accept(tx);
        acceptedFirst();
        await held;
        return result;
      });
      await firstAccepted;
      const second = database.db.transaction(accept).then(
        () => null,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      return { first: await first, second: await second };
    }
    const gone = {
      appCode: 'NOT_FOUND',
      detail: 'This invitation is not valid: it expired, was withdrawn, or was already accepted.',
    };

    await invite('at-once@invites.test', 'viewer');
    const newPerson = (await lastLink('at-once@invites.test')).token;
    const made = await together((tx) => acceptInvitationAsNewUser(tx, { token: newPerson, now }));
    expect(made.first).toMatchObject({ teamId: team.id, email: 'at-once@invites.test' });
    expect(made.second).toMatchObject(gone);

    const other = (
      await createTeam(database.db, { name: 'Twice', adminEmail: 'signed-in@account.test' }, () => now)
    ).owner;
    await invite('signed-in@account.test', 'viewer');
    const signedIn = (await lastLink('signed-in@account.test')).token;
    const joined = await together((tx) =>
      acceptInvitation(tx, {
        token: signedIn,
        user: { id: other.userId, email: 'signed-in@account.test' },
        now,
      }),
    );
    expect(joined.first).toMatchObject({ teamId: team.id, email: 'signed-in@account.test' });
    expect(joined.second).toMatchObject(gone);
  });

  it('one open invitation per person: inviting again replaces it; a withdrawn or expired one does nothing', async () => {
    const first = await invite('twice@invites.test', 'viewer');
    const firstToken = (await lastLink('twice@invites.test')).token;
    const second = await invite('twice@invites.test', 'admin');
    expect(second.id).not.toBe(first.id);
    await expect(showInvitation(database.db, firstToken, now)).rejects.toMatchObject({
      appCode: 'NOT_FOUND',
    });
    const pending = await listPendingInvitations(database.db, team.id, now);
    expect(pending.filter((p) => p.email === 'twice@invites.test').map((p) => p.role)).toEqual(['admin']);
    const withdrawn = await database.db.transaction((tx) =>
      revokeInvitation(tx, { teamId: team.id, invitationId: second.id, now }, 'admin'),
    );
    expect(withdrawn).toEqual({ email: 'twice@invites.test', role: 'admin' });
    await expect(
      database.db.transaction((tx) =>
        revokeInvitation(tx, { teamId: team.id, invitationId: second.id, now }, 'owner'),
      ),
    ).rejects.toMatchObject({ appCode: 'NOT_FOUND', detail: 'No such pending invitation in this team.' });
    // Past its 7 days.
    await invite('late@invites.test', 'viewer');
    const late = (await lastLink('late@invites.test')).token;
    const after = new Date(now.getTime() + INVITATION_DAYS * 86_400_000);
    expect((await listPendingInvitations(database.db, team.id, after)).map((p) => p.email)).not.toContain(
      'late@invites.test',
    );
    await expect(showInvitation(database.db, late, after)).rejects.toMatchObject({ appCode: 'NOT_FOUND' });
    expect((await showInvitation(database.db, late, new Date(after.getTime() - 1))).email).toBe(
      'late@invites.test',
    );
  });

  it('only an owner invites or withdraws an owner', async () => {
    await expect(invite('boss@invites.test', 'owner', 'admin')).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'Only an owner can make someone an owner.',
    });
    const boss = await invite('boss@invites.test', 'owner', 'owner');
    await expect(
      database.db.transaction((tx) =>
        revokeInvitation(tx, { teamId: team.id, invitationId: boss.id, now }, 'admin'),
      ),
    ).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'Only an owner can withdraw an invitation to become owner.',
    });
    const other = (
      await createTeam(database.db, { name: 'Other team', adminEmail: 'x@other.test' }, () => now)
    ).team;
    await expect(
      database.db.transaction((tx) =>
        revokeInvitation(tx, { teamId: other.id, invitationId: boss.id, now }, 'owner'),
      ),
    ).rejects.toMatchObject({ appCode: 'NOT_FOUND' });
    // Its own team's owner withdraws it.
    expect(
      await database.db.transaction((tx) =>
        revokeInvitation(tx, { teamId: team.id, invitationId: boss.id, now }, 'owner'),
      ),
    ).toEqual({ email: 'boss@invites.test', role: 'owner' });
  });

  it('an admin invites and withdraws admins and viewers', async () => {
    const admin = await invite('deputy@invites.test', 'admin', 'admin');
    await invite('reader@invites.test', 'viewer', 'admin');
    await database.db.transaction((tx) =>
      revokeInvitation(tx, { teamId: team.id, invitationId: admin.id, now }, 'admin'),
    );
    const pending = await listPendingInvitations(database.db, team.id, now);
    expect(pending.map((invitation) => invitation.email)).not.toContain('deputy@invites.test');
    expect(pending.map((invitation) => invitation.email)).toContain('reader@invites.test');
  });

  it('mails a link that signs a new person in at most 5 times in 15 minutes per address; one with an account is not held to it', async () => {
    const links = await createTeam(database.db, { name: 'Links', adminEmail: 'owner@links.test' }, () => now);
    // An account made elsewhere (the owner of another team).
    await createTeam(database.db, { name: 'Elsewhere', adminEmail: 'member@elsewhere.test' }, () => now);
    const send = (email: string) =>
      database.db.transaction((tx) =>
        inviteMember(
          tx,
          {
            rateLimiters: inProcess.rateLimiters,
            clientAddress: '198.51.100.250',
            baseUrl: 'https://console.test',
            now,
          },
          {
            teamId: links.team.id,
            teamName: 'Links',
            email,
            role: 'viewer',
            inviter: { userId: links.owner.userId, email: 'owner@links.test' },
          },
          'owner',
        ),
      );
    for (let i = 0; i < 5; i++) await send('newcomer@links.test');
    await expect(send('newcomer@links.test')).rejects.toMatchObject({
      appCode: 'RATE_LIMITED',
      detail: expect.stringMatching(/^Too many sign-in links were asked for this account from your address/),
    });
    // Someone with an account signs in as they do; the link only accepts: no sign-in budget spent.
    for (let i = 0; i < 6; i++) await send('member@elsewhere.test');
  });

  it('a team sends at most 20 a day', async () => {
    const busy = await createTeam(database.db, { name: 'Busy', adminEmail: 'owner@busy.test' }, () => now);
    const send = (i: number) =>
      database.db.transaction((tx) =>
        inviteMember(
          tx,
          {
            rateLimiters: inProcess.rateLimiters,
            clientAddress: '198.51.100.200',
            baseUrl: 'https://console.test',
            now,
          },
          {
            teamId: busy.team.id,
            teamName: 'Busy',
            email: `p${i}@busy.test`,
            role: 'viewer',
            inviter: { userId: busy.owner.userId, email: 'owner@busy.test' },
          },
          'owner',
        ),
      );
    for (let i = 0; i < 20; i++) await send(i);
    await expect(send(20)).rejects.toMatchObject({ appCode: 'RATE_LIMITED' });
    const sent = await database.db
      .select()
      .from(teamInvitations)
      .where(and(eq(teamInvitations.teamId, busy.team.id)));
    expect(sent).toHaveLength(20);
  });
});

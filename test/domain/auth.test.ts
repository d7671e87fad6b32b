/**
 * Who may do what, in-process against a real PostgreSQL (server/auth): API keys as Unkey keeps
 * them (prefix and random part, only a hash stored, named by prefix and last four, revoked for
 * good), a team's owners and admins and viewers and the rule that a team keeps an owner, the
 * CLI's one-time password, and the re-entered password that guards secrets.
 */
import { createHash } from 'node:crypto';
import { eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, authUsers, rateLimits, teamMembers } from '@/db/schema';
import {
  API_KEY_PREFIXES,
  apiKeyLabel,
  authenticateApiKey,
  bearerToken,
  createApiKey,
  hashApiKey,
  listApiKeys,
  revokeApiKey,
} from '@/server/auth/api-keys';
import { confirmCurrentPassword, FRESH_SIGN_IN_MS, signedInRecently } from '@/server/auth/reauthentication';
import {
  canManage,
  changeMemberRole,
  checkPassword,
  clearPasswordChangeRequired,
  createTeamOwner,
  findUserByEmail,
  listMembers,
  listTeamAdminEmails,
  listUserTeams,
  normaliseEmail,
  ONE_TIME_PASSWORD_DAYS,
  oneTimePasswordExpired,
  passwordChangeRequired,
  readPasswordHash,
  removeMember,
  resolveMembership,
} from '@/server/auth/team-members';
import type { Clock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;
let now = new Date('2026-11-28T12:00:00Z');
const clock: Clock = () => new Date(now);

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  teamId = (await createTeam(database.db, { name: 'Keys', adminEmail: 'Owner@Keys.test' }, clock)).team.id;
});

afterAll(async () => {
  await inProcess?.close();
});

describe('API keys', () => {
  it('are a mode’s prefix and 40 base62 characters; only the SHA-256 is stored, with the prefix and last four', async () => {
    const live = await createApiKey(database.db, { teamId, name: 'CI' });
    expect(live.token).toMatch(/^vouch_live_[0-9A-Za-z]{40}$/);
    expect(live).toMatchObject({
      mode: 'live',
      name: 'CI',
      prefix: live.token.slice(0, 15),
      lastFour: live.token.slice(-4),
    });
    const test = await createApiKey(database.db, { teamId, mode: 'test' });
    expect(test.token).toMatch(/^vouch_test_[0-9A-Za-z]{40}$/);
    expect(test).toMatchObject({ mode: 'test', name: '' });
    const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, live.id));
    expect(row?.keyHash).toBe(createHash('sha256').update(live.token).digest('hex'));
    expect(hashApiKey(live.token)).toBe(row?.keyHash);
    expect(JSON.stringify(row)).not.toContain(live.token.slice(15, 51));
    expect(row).toMatchObject({
      prefix: live.token.slice(0, 15),
      lastFour: live.token.slice(-4),
      livemode: true,
    });
    expect(apiKeyLabel(live.token)).toBe(`${live.token.slice(0, 15)}…${live.token.slice(-4)}`);
    expect(apiKeyLabel(test.token)).toBe(`${test.token.slice(0, 15)}…${test.token.slice(-4)}`);
    expect(API_KEY_PREFIXES).toEqual({ live: 'vouch_live_', test: 'vouch_test_' });
    const listed = await listApiKeys(database.db, teamId);
    expect(listed.map((key) => key.id)).toEqual(expect.arrayContaining([live.id, test.id]));
  });

  it('read a bearer token from the Authorization header only', () => {
    expect(bearerToken('Bearer vouch_live_abc')).toBe('vouch_live_abc');
    expect(bearerToken('bearer   vouch_live_abc  ')).toBe('vouch_live_abc');
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken('Bearer\tvouch_live_abc')).toBe('vouch_live_abc');
    expect(bearerToken('xBearer vouch_live_abc')).toBeNull();
    expect(bearerToken('Bearervouch_live_abc')).toBeNull();
    expect(bearerToken('Bearer vouch_live_abc x')).toBeNull();
    expect(bearerToken('Bearer  ')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken(null)).toBeNull();
  });

  it('authenticate to their team and mode with its budgets, note their use at most once a minute, and stop when revoked', async () => {
    const key = await createApiKey(database.db, { teamId, mode: 'test' });
    await updateTeam(database.db, teamId, { rateLimitReadPerMinute: 500, rateLimitWritePerMinute: 70 });
    const spend = () => inProcess.rateLimiters.spendIn('read');
    const found = await authenticateApiKey(database.db, key.token, clock, spend());
    // The look-up spent a point of the team's test-mode read budget, keyed as the limiter keys it.
    expect(found).toEqual({
      keyId: key.id,
      scope: { teamId, livemode: false },
      budgets: { read: 500, write: 70 },
      spent: { key: `read:${teamId}:test`, points: 1, expire: expect.any(Date) },
    });
    const used = async () =>
      (await database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id)))[0]?.lastUsedAt?.getTime();
    expect(await used()).toBe(now.getTime());
    const first = now.getTime();
    now = new Date(first + 30_000);
    expect((await authenticateApiKey(database.db, key.token, clock, spend()))?.spent.points).toBe(2);
    expect(await used()).toBe(first);
    now = new Date(first + 61_000);
    await authenticateApiKey(database.db, key.token, clock, spend());
    expect(await used()).toBe(now.getTime());
    // Anything not a key of ours is no key, before any look-up, and spends nothing.
    for (const token of ['', 'sk_live_x', `vouch_live_${'a'.repeat(200)}`, `${key.token}x`]) {
      expect(await authenticateApiKey(database.db, token, clock, spend()), token.slice(0, 20)).toBeNull();
    }
    const counters = async () =>
      (
        await database.db
          .select()
          .from(rateLimits)
          .where(like(rateLimits.key, `%${teamId}%`))
      ).map((row) => [row.key, row.points]);
    expect(await counters()).toEqual([[`read:${teamId}:test`, 3]]);
    expect(await revokeApiKey(database.db, { keyId: key.id, teamId }, clock)).toEqual({
      name: '',
      prefix: key.prefix,
      lastFour: key.lastFour,
    });
    expect(await authenticateApiKey(database.db, key.token, clock, spend())).toBeNull();
    expect(await counters()).toEqual([[`read:${teamId}:test`, 3]]);
    // Revoking again names the key; another team's or an unknown key is none.
    expect(await revokeApiKey(database.db, { keyId: key.id }, clock)).toMatchObject({ prefix: key.prefix });
    const other = (await createTeam(database.db, { name: 'Other', adminEmail: 'o@other.test' }, clock)).team
      .id;
    expect(await revokeApiKey(database.db, { keyId: key.id, teamId: other }, clock)).toBeNull();
    expect(
      await revokeApiKey(database.db, { keyId: '00000000-0000-4000-8000-000000000000' }, clock),
    ).toBeNull();
  });
});

describe('members', () => {
  it('owners and admins manage, viewers read; e-mail addresses are kept trimmed and lower-case', async () => {
    expect(canManage('owner')).toBe(true);
    expect(canManage('admin')).toBe(true);
    expect(canManage('viewer')).toBe(false);
    expect(normaliseEmail('  Ada@Example.TEST ')).toBe('ada@example.test');
    expect((await findUserByEmail(database.db, 'OWNER@keys.test '))?.email).toBe('owner@keys.test');
    expect(await findUserByEmail(database.db, 'nobody@keys.test')).toBeNull();
  });

  it('a new owner gets a one-time password for 7 days, to be replaced; an existing person keeps theirs', async () => {
    const team = (await createTeam(database.db, { name: 'Owners', adminEmail: 'first@owners.test' }, clock))
      .team.id;
    const owner = await createTeamOwner(database.db, { teamId: team, email: 'New@Owners.test', now });
    expect(owner.email).toBe('new@owners.test');
    expect(owner.oneTimePassword).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(await passwordChangeRequired(database.db, owner.userId)).toBe(true);
    expect(await checkPassword(database.db, owner.userId, owner.oneTimePassword ?? '')).toBe(true);
    expect(await checkPassword(database.db, owner.userId, 'wrong-password')).toBe(false);
    const [user] = await database.db.select().from(authUsers).where(eq(authUsers.id, owner.userId));
    expect(user?.oneTimePasswordExpiresAt?.getTime()).toBe(
      now.getTime() + ONE_TIME_PASSWORD_DAYS * 86_400_000,
    );
    expect(user?.emailVerified).toBe(true);
    expect(
      await oneTimePasswordExpired(database.db, owner.userId, new Date(now.getTime() + 7 * 86_400_000 - 1)),
    ).toBe(false);
    expect(
      await oneTimePasswordExpired(database.db, owner.userId, new Date(now.getTime() + 7 * 86_400_000)),
    ).toBe(true);
    await clearPasswordChangeRequired(database.db, owner.userId, now);
    expect(await passwordChangeRequired(database.db, owner.userId)).toBe(false);
    expect(
      await oneTimePasswordExpired(database.db, owner.userId, new Date(now.getTime() + 30 * 86_400_000)),
    ).toBe(false);
    // Someone with an account already: made owner, no new password.
    const again = await createTeamOwner(database.db, { teamId: teamId, email: 'new@owners.test', now });
    expect(again).toEqual({ userId: owner.userId, email: 'new@owners.test', oneTimePassword: null });
    expect((await listUserTeams(database.db, owner.userId)).map((m) => [m.teamId, m.role])).toEqual([
      [team, 'owner'],
      [teamId, 'owner'],
    ]);
    expect((await resolveMembership(database.db, owner.userId, teamId))?.teamId).toBe(teamId);
    expect((await resolveMembership(database.db, owner.userId, null))?.teamId).toBe(team);
    expect(
      (await resolveMembership(database.db, owner.userId, '00000000-0000-4000-8000-000000000000'))?.teamId,
    ).toBe(team);
    expect(await readPasswordHash(database.db, 'no-such-user')).toBeNull();
  });

  it('a team keeps an owner: only an owner changes or removes an owner, and never the last', async () => {
    const created = await createTeam(database.db, { name: 'Roles', adminEmail: 'boss@roles.test' }, clock);
    const team = created.team.id;
    const boss = created.owner.userId;
    const second = await createTeamOwner(database.db, { teamId: team, email: 'second@roles.test', now });
    await database.db.update(teamMembers).set({ role: 'admin' }).where(eq(teamMembers.userId, second.userId));
    const viewer = await createTeamOwner(database.db, { teamId: team, email: 'viewer@roles.test', now });
    await database.db
      .update(teamMembers)
      .set({ role: 'viewer' })
      .where(eq(teamMembers.userId, viewer.userId));
    expect(await listTeamAdminEmails(database.db, team)).toEqual(['boss@roles.test', 'second@roles.test']);
    // Each is named by their address's local part until they name themselves.
    expect((await listMembers(database.db, team)).map((m) => [m.email, m.name, m.role])).toEqual([
      ['boss@roles.test', 'boss', 'owner'],
      ['second@roles.test', 'second', 'admin'],
      ['viewer@roles.test', 'viewer', 'viewer'],
    ]);
    const change = (
      userId: string,
      role: 'owner' | 'admin' | 'viewer',
      actor: 'owner' | 'admin' | 'viewer',
    ) => database.db.transaction((tx) => changeMemberRole(tx, { teamId: team, userId, role }, actor));
    await expect(change(viewer.userId, 'owner', 'admin')).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'Only an owner can make someone an owner.',
    });
    await expect(change(boss, 'viewer', 'admin')).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'Only an owner can change or remove an owner.',
    });
    await expect(change(boss, 'admin', 'owner')).rejects.toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: 'A team needs at least one owner: make someone else owner first.',
    });
    await expect(
      database.db.transaction((tx) => removeMember(tx, { teamId: team, userId: boss }, 'owner')),
    ).rejects.toMatchObject({ appCode: 'VALIDATION_ERROR' });
    await expect(change('00000000-0000-4000-8000-000000000000', 'admin', 'owner')).rejects.toMatchObject({
      appCode: 'NOT_FOUND',
      detail: 'No such member in this team.',
    });
    // The sole owner made owner again: nothing to change, so nothing refused.
    await change(boss, 'owner', 'owner');
    // An admin setting a viewer's role to what it is: no change, and no owner's right needed.
    await change(viewer.userId, 'viewer', 'viewer');
    // The same role again changes nothing; an admin changes a viewer; an owner makes an owner.
    await change(viewer.userId, 'viewer', 'admin');
    await change(viewer.userId, 'admin', 'admin');
    await change(second.userId, 'owner', 'owner');
    await change(boss, 'admin', 'owner');
    expect((await listMembers(database.db, team)).map((m) => m.role)).toEqual(['admin', 'owner', 'admin']);
    expect(
      await database.db.transaction((tx) =>
        removeMember(tx, { teamId: team, userId: viewer.userId }, 'admin'),
      ),
    ).toEqual({ email: 'viewer@roles.test' });
    expect((await listMembers(database.db, team)).map((m) => m.email)).toEqual([
      'boss@roles.test',
      'second@roles.test',
    ]);
    // The person's account stays.
    expect(await findUserByEmail(database.db, 'viewer@roles.test')).not.toBeNull();
  });
});

describe('re-authentication', () => {
  it('a re-entered password: right passes, wrong is refused and spends the account’s budget', async () => {
    const owner = await createTeamOwner(database.db, { teamId, email: 'reauth@keys.test', now });
    const ctx = {
      db: database.db,
      rateLimiters: inProcess.rateLimiters,
      clientAddress: '198.51.100.20',
      user: { id: owner.userId, email: 'reauth@keys.test' },
    };
    await confirmCurrentPassword(ctx, owner.oneTimePassword ?? '');
    await expect(confirmCurrentPassword(ctx, 'not-the-password')).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      detail: 'That password is not correct.',
    });
    for (let i = 0; i < 4; i++) await confirmCurrentPassword(ctx, 'not-the-password').catch(() => undefined);
    await expect(confirmCurrentPassword(ctx, owner.oneTimePassword ?? '')).rejects.toMatchObject({
      appCode: 'RATE_LIMITED',
    });
  });

  it('a sign-in stands in for a password for 10 minutes', () => {
    const signedIn = new Date('2026-11-28T12:00:00Z');
    expect(FRESH_SIGN_IN_MS).toBe(600_000);
    expect(signedInRecently(signedIn, new Date(signedIn.getTime() + 600_000))).toBe(true);
    expect(signedInRecently(signedIn, new Date(signedIn.getTime() + 600_001))).toBe(false);
  });
});

import { utc } from '@date-fns/utc';
import { hashPassword, verifyPassword } from 'better-auth/crypto';
import { addDays } from 'date-fns';
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { authAccounts, authUsers, type TeamRole, teamMembers, teams } from '@/db/schema';
import { AppError } from '@/server/platform/errors';
import { randomBase62, randomUUID } from '@/server/platform/ids';

/** Roles that may change things; `viewer` only reads. */
export const MANAGING_ROLES: readonly TeamRole[] = ['owner', 'admin'];

export function canManage(role: TeamRole): boolean {
  return MANAGING_ROLES.includes(role);
}

/** Where team notices go (e.g. "your webhook endpoint was disabled"): every owner and admin. */
export async function listTeamAdminEmails(db: Queryable, teamId: string): Promise<string[]> {
  const rows = await db
    .select({ email: authUsers.email })
    .from(teamMembers)
    .innerJoin(authUsers, eq(authUsers.id, teamMembers.userId))
    .where(and(eq(teamMembers.teamId, teamId), inArray(teamMembers.role, [...MANAGING_ROLES])))
    .orderBy(asc(teamMembers.createdAt));
  return rows.map((r) => r.email);
}

export interface Membership {
  teamId: string;
  teamName: string;
  role: TeamRole;
}

/** The teams a user belongs to, oldest membership first. */
export async function listUserTeams(db: Queryable, userId: string): Promise<Membership[]> {
  return db
    .select({ teamId: teamMembers.teamId, teamName: teams.name, role: teamMembers.role })
    .from(teamMembers)
    .innerJoin(teams, eq(teams.id, teamMembers.teamId))
    .where(eq(teamMembers.userId, userId))
    .orderBy(asc(teamMembers.createdAt), asc(teamMembers.teamId));
}

/**
 * The team a console request acts on: the one the user picked, if they belong to it, else their
 * first. Null when the user belongs to no team (every membership was removed).
 */
export async function resolveMembership(
  db: Queryable,
  userId: string,
  preferredTeamId: string | null,
): Promise<Membership | null> {
  const memberships = await listUserTeams(db, userId);
  return memberships.find((m) => m.teamId === preferredTeamId) ?? memberships[0] ?? null;
}

/** E-mail addresses as accounts and invitations keep them. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function findUserByEmail(db: Queryable, email: string) {
  const [user] = await db
    .select()
    .from(authUsers)
    .where(eq(authUsers.email, normaliseEmail(email)));
  return user ?? null;
}

/**
 * A new console account without a password, its address taken as proven: the operator vouches
 * for the one they typed, an invitation's link for the one it was mailed to. Left unverified, the
 * first e-mailed sign-in link would make better-auth treat a password set before it as an
 * intruder's (an account made before the address was proven) and delete it with every session.
 */
export async function insertUser(db: Queryable, email: string, now: Date) {
  const [user] = await db
    .insert(authUsers)
    .values({
      id: randomUUID(),
      email: normaliseEmail(email),
      name: normaliseEmail(email).split('@')[0] ?? '',
      emailVerified: true,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!user) throw new Error('user insert returned nothing');
  return user;
}

export interface CreatedOwner {
  userId: string;
  email: string;
  /** Set only when the user is new: printed once by the CLI, to be changed at first sign-in. */
  oneTimePassword: string | null;
}

/**
 * How long a one-time password printed by the CLI can be used: long enough for it to reach the
 * new owner, short enough that a printout nobody used stops being a way in.
 */
export const ONE_TIME_PASSWORD_DAYS = 7;

/**
 * Makes `email` the owner of a new team (the operator's `teams create`). A new person gets a
 * one-time password, valid for 7 days; someone who already has a console account keeps theirs.
 */
export async function createTeamOwner(
  db: Queryable,
  input: { teamId: string; email: string; now: Date },
): Promise<CreatedOwner> {
  const { teamId, email, now } = input;
  let user = await findUserByEmail(db, email);
  let oneTimePassword: string | null = null;
  if (!user) {
    user = await insertUser(db, email, now);
    oneTimePassword = randomBase62(20);
    await db
      .update(authUsers)
      .set({
        passwordChangeRequired: true,
        oneTimePasswordExpiresAt: addDays(now, ONE_TIME_PASSWORD_DAYS, { in: utc }),
      })
      .where(eq(authUsers.id, user.id));
    await db.insert(authAccounts).values({
      id: randomUUID(),
      accountId: user.id,
      providerId: 'credential',
      userId: user.id,
      password: await hashPassword(oneTimePassword),
    });
  }
  await db.insert(teamMembers).values({ teamId, userId: user.id, role: 'owner' });
  return { userId: user.id, email: user.email, oneTimePassword };
}

export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: TeamRole;
  joinedAt: Date;
}

export async function listMembers(db: Queryable, teamId: string): Promise<MemberView[]> {
  return db
    .select({
      userId: teamMembers.userId,
      email: authUsers.email,
      name: authUsers.name,
      role: teamMembers.role,
      joinedAt: teamMembers.createdAt,
    })
    .from(teamMembers)
    .innerJoin(authUsers, eq(authUsers.id, teamMembers.userId))
    .where(eq(teamMembers.teamId, teamId))
    .orderBy(asc(teamMembers.createdAt));
}

async function lockMember(db: Queryable, teamId: string, userId: string) {
  // Locking the team's member rows serialises role changes, so two owners cannot demote each
  // other at once and leave the team without one.
  const rows = await db.select().from(teamMembers).where(eq(teamMembers.teamId, teamId)).for('update');
  const member = rows.find((r) => r.userId === userId);
  if (!member) throw new AppError('NOT_FOUND', 'No such member in this team.');
  const owners = rows.filter((r) => r.role === 'owner').length;
  return { member, owners };
}

function checkMayChange(memberRole: TeamRole, actorRole: TeamRole, owners: number) {
  if (memberRole === 'owner' && actorRole !== 'owner') {
    throw new AppError('FORBIDDEN', 'Only an owner can change or remove an owner.');
  }
  if (memberRole === 'owner' && owners <= 1) {
    throw new AppError('VALIDATION_ERROR', 'A team needs at least one owner: make someone else owner first.');
  }
}

/** Call inside a transaction (the member rows stay locked until it ends). */
export async function changeMemberRole(
  tx: Queryable,
  input: { teamId: string; userId: string; role: TeamRole },
  actorRole: TeamRole,
): Promise<void> {
  const { member, owners } = await lockMember(tx, input.teamId, input.userId);
  if (member.role === input.role) return;
  if (input.role === 'owner' && actorRole !== 'owner') {
    throw new AppError('FORBIDDEN', 'Only an owner can make someone an owner.');
  }
  checkMayChange(member.role, actorRole, owners);
  await tx
    .update(teamMembers)
    .set({ role: input.role })
    .where(and(eq(teamMembers.teamId, input.teamId), eq(teamMembers.userId, input.userId)));
}

/** Call inside a transaction. The person's account stays (they may belong to other teams). */
export async function removeMember(
  tx: Queryable,
  input: { teamId: string; userId: string },
  actorRole: TeamRole,
): Promise<{ email: string }> {
  const { member, owners } = await lockMember(tx, input.teamId, input.userId);
  checkMayChange(member.role, actorRole, owners);
  await tx
    .delete(teamMembers)
    .where(and(eq(teamMembers.teamId, input.teamId), eq(teamMembers.userId, input.userId)));
  const [user] = await tx
    .select({ email: authUsers.email })
    .from(authUsers)
    .where(eq(authUsers.id, input.userId));
  return { email: user?.email ?? '' };
}

/** Whether the user must replace a one-time password before using the console. */
export async function passwordChangeRequired(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ required: authUsers.passwordChangeRequired })
    .from(authUsers)
    .where(eq(authUsers.id, userId));
  return row?.required ?? false;
}

export async function clearPasswordChangeRequired(db: Queryable, userId: string, now: Date): Promise<void> {
  await db
    .update(authUsers)
    .set({ passwordChangeRequired: false, oneTimePasswordExpiresAt: null, updatedAt: now })
    .where(eq(authUsers.id, userId));
}

/**
 * Whether the user's password is a one-time password from the CLI that is past its 7 days: it no
 * longer signs in (an e-mailed sign-in link still does, and then a password can be set).
 */
export async function oneTimePasswordExpired(db: Queryable, userId: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ required: authUsers.passwordChangeRequired, expiresAt: authUsers.oneTimePasswordExpiresAt })
    .from(authUsers)
    .where(eq(authUsers.id, userId));
  return !!row?.required && row.expiresAt !== null && row.expiresAt <= now;
}

/** The stored password hash of a user's credential account, or null for link-only users. */
export async function readPasswordHash(db: Queryable, userId: string): Promise<string | null> {
  const [row] = await db
    .select({ password: authAccounts.password })
    .from(authAccounts)
    .where(and(eq(authAccounts.userId, userId), eq(authAccounts.providerId, 'credential')));
  return row?.password ?? null;
}

/**
 * Replaces the hash of a user's password (a one-time password's holder choosing their own just
 * after signing in with it, which proved it; see changePassword).
 */
export async function replacePassword(
  db: Queryable,
  userId: string,
  password: string,
  now: Date,
): Promise<void> {
  await db
    .update(authAccounts)
    .set({ password: await hashPassword(password), updatedAt: now })
    .where(and(eq(authAccounts.userId, userId), eq(authAccounts.providerId, 'credential')));
}

/** Whether `password` is the user's current password (re-entered before revealing a secret). */
export async function checkPassword(db: Queryable, userId: string, password: string): Promise<boolean> {
  const hash = await readPasswordHash(db, userId);
  return hash !== null && (await verifyPassword({ hash, password }));
}

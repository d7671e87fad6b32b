import { utc } from '@date-fns/utc';
import { addDays } from 'date-fns';
import { asc, eq, ilike } from 'drizzle-orm';
import type { Db, Queryable } from '@/db/client';
import { plans, type SubscriptionStatus, teams } from '@/db/schema';
import { createApiKey } from '@/server/auth/api-keys';
import { createTeamOwner } from '@/server/auth/team-members';
import type { Clock } from '@/server/platform/clock';
import { createTeamSecrets } from './team-secrets';

async function findPlan(db: Db, code: string) {
  const [plan] = await db.select().from(plans).where(eq(plans.code, code));
  if (!plan) {
    const known = (await db.select({ code: plans.code }).from(plans)).map((p) => p.code);
    throw new Error(`unknown plan "${code}" (known: ${known.join(', ')})`);
  }
  return plan;
}

/**
 * A new team with its first API key and its owner (the admin e-mail; a new person gets a one-time
 * password). A trial plan starts `trialing` with its trial's end set; a
 * paid plan starts `active`. The billing period is anchored at creation.
 */
export async function createTeam(
  db: Db,
  input: { name: string; adminEmail: string; planCode?: string },
  clock: Clock,
) {
  const plan = await findPlan(db, input.planCode ?? 'trial');
  const now = clock();
  return db.transaction(async (tx) => {
    const [team] = await tx
      .insert(teams)
      .values({
        name: input.name,
        planCode: plan.code,
        subscriptionStatus: plan.trialDays !== null ? 'trialing' : 'active',
        trialEndsAt: plan.trialDays !== null ? addDays(now, plan.trialDays, { in: utc }) : null,
        billingAnchor: now,
        createdAt: now,
      })
      .returning();
    if (!team) throw new Error('team insert returned nothing');
    await createTeamSecrets(tx, team.id);
    // A live key and a test key from the start: an integrator builds against test mode first.
    const key = await createApiKey(tx, { teamId: team.id, name: 'Default key' });
    const testKey = await createApiKey(tx, { teamId: team.id, name: 'Default test key', mode: 'test' });
    const owner = await createTeamOwner(tx, { teamId: team.id, email: input.adminEmail, now });
    return { team, key, testKey, owner };
  });
}

/**
 * The teams as the operator lists them (`teams list`), oldest first: what names a team in the
 * other commands (its id) beside what tells teams apart (name, plan, subscription, trial end).
 * `nameContains` narrows them to names containing it, in any case.
 */
export async function listTeams(db: Queryable, filter: { nameContains?: string } = {}) {
  return db
    .select({
      id: teams.id,
      name: teams.name,
      planCode: teams.planCode,
      subscriptionStatus: teams.subscriptionStatus,
      trialEndsAt: teams.trialEndsAt,
      createdAt: teams.createdAt,
    })
    .from(teams)
    .where(filter.nameContains ? ilike(teams.name, `%${likePattern(filter.nameContains)}%`) : undefined)
    .orderBy(asc(teams.createdAt), asc(teams.id));
}

/** `text` matched as it is inside a LIKE pattern: its wildcards and escape taken literally. */
function likePattern(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** The longest retention period a team may choose, in days (ten years). */
export const MAX_RETENTION_DAYS = 3650;

/** How long the team keeps ended cases (days), or null: until someone erases them. */
export async function readRetentionDays(db: Queryable, teamId: string): Promise<number | null> {
  const [team] = await db
    .select({ retentionDays: teams.retentionDays })
    .from(teams)
    .where(eq(teams.id, teamId));
  return team?.retentionDays ?? null;
}

export async function updateTeam(
  db: Queryable,
  teamId: string,
  changes: {
    planCode?: string;
    subscriptionStatus?: SubscriptionStatus;
    topupBalanceCents?: number;
    trialEndsAt?: Date | null;
    /** Days ended cases are kept before the retention job redacts them; null keeps them. */
    retentionDays?: number | null;
    /** The team's API budgets per minute; null returns to the configured defaults. */
    rateLimitReadPerMinute?: number | null;
    rateLimitWritePerMinute?: number | null;
  },
) {
  if (changes.planCode !== undefined) await findPlan(db, changes.planCode);
  const [team] = await db
    .update(teams)
    .set({
      ...(changes.planCode !== undefined ? { planCode: changes.planCode } : {}),
      ...(changes.subscriptionStatus !== undefined ? { subscriptionStatus: changes.subscriptionStatus } : {}),
      ...(changes.topupBalanceCents !== undefined ? { topupBalanceCents: changes.topupBalanceCents } : {}),
      ...(changes.trialEndsAt !== undefined ? { trialEndsAt: changes.trialEndsAt } : {}),
      ...(changes.retentionDays !== undefined ? { retentionDays: changes.retentionDays } : {}),
      ...(changes.rateLimitReadPerMinute !== undefined
        ? { rateLimitReadPerMinute: changes.rateLimitReadPerMinute }
        : {}),
      ...(changes.rateLimitWritePerMinute !== undefined
        ? { rateLimitWritePerMinute: changes.rateLimitWritePerMinute }
        : {}),
    })
    .where(eq(teams.id, teamId))
    .returning();
  if (!team) throw new Error(`no team ${teamId}`);
  return team;
}

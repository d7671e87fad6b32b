/**
 * What the operator's command line states and lists, against a real PostgreSQL migrated from
 * scratch: the plans its help states (cli/plans-help.ts, said without a database) are the seed
 * migration's rows, and `teams list` (listTeams) lists every team with what names it elsewhere.
 */
import { asc } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEEDED_PLANS, seededTopupCents } from '@/cli/plans-help';
import { methodPrices, plans } from '@/db/schema';
import { createTeam, listTeams, updateTeam } from '@/server/teams/manage-teams';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

describe('the operator CLI', () => {
  it('states in its help the plan catalogue and top-up prices the migrations seed', async () => {
    const seeded = await database.db.select().from(plans).orderBy(asc(plans.includedUnits));
    expect(
      seeded.map(({ code, name, includedUnits, trialDays }) => ({ code, name, includedUnits, trialDays })),
    ).toEqual(SEEDED_PLANS);
    const prices = await database.db.select().from(methodPrices);
    expect(Object.fromEntries(prices.map((price) => [price.method, price.topupPriceCents]))).toEqual(
      seededTopupCents(),
    );
  });

  it('lists every team, oldest first, with its id, plan, subscription and trial end; --name narrows them', async () => {
    const at = (iso: string) => () => new Date(iso);
    const trial = await createTeam(
      database.db,
      { name: 'Acme 100%', adminEmail: 'owner@acme.test' },
      at('2026-11-01T09:00:00Z'),
    );
    const paid = await createTeam(
      database.db,
      { name: 'Globex', adminEmail: 'owner@globex.test', planCode: 'growth' },
      at('2026-11-02T09:00:00Z'),
    );
    await updateTeam(database.db, paid.team.id, { subscriptionStatus: 'past_due' });
    expect(await listTeams(database.db)).toEqual([
      {
        id: trial.team.id,
        name: 'Acme 100%',
        planCode: 'trial',
        subscriptionStatus: 'trialing',
        trialEndsAt: new Date('2026-11-15T09:00:00Z'),
        createdAt: new Date('2026-11-01T09:00:00Z'),
      },
      {
        id: paid.team.id,
        name: 'Globex',
        planCode: 'growth',
        subscriptionStatus: 'past_due',
        trialEndsAt: null,
        createdAt: new Date('2026-11-02T09:00:00Z'),
      },
    ]);
    expect((await listTeams(database.db, { nameContains: 'gLoB' })).map((team) => team.id)).toEqual([
      paid.team.id,
    ]);
    // Its text is matched as it is: "%" and "_" are no wildcards.
    expect((await listTeams(database.db, { nameContains: '0%' })).map((team) => team.name)).toEqual([
      'Acme 100%',
    ]);
    expect(await listTeams(database.db, { nameContains: '_' })).toEqual([]);
  });
});

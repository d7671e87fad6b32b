import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reusableQuery } from '@/db/reusable-query';
import { teams } from '@/db/schema';
import { randomUUID } from '@/server/platform/ids';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

/** The statements this transaction's connection holds prepared. */
async function preparedOnThisConnection(
  tx: Parameters<Parameters<TestDatabase['db']['transaction']>[0]>[0],
): Promise<string[]> {
  const rows = (await tx.execute(sql`select statement from pg_prepared_statements`)) as unknown as Array<{
    statement: string;
  }>;
  return rows.map((row) => row.statement);
}

describe('database client', () => {
  it('runs drizzle queries as prepared statements, inside transactions too', async () => {
    await database.db.transaction(async (tx) => {
      await tx.select({ id: teams.id }).from(teams).where(eq(teams.id, randomUUID()));
      const prepared = await preparedOnThisConnection(tx);
      expect(prepared.some((s) => s.startsWith('select "id" from "teams" where "teams"."id" = $1'))).toBe(
        true,
      );
    });
  });

  it('leaves bulk statements (over 100 parameters) unprepared', async () => {
    const ids = Array.from({ length: 101 }, () => randomUUID());
    await database.db.transaction(async (tx) => {
      const found = await tx.select({ id: teams.id }).from(teams).where(inArray(teams.id, ids));
      expect(found).toEqual([]);
      const prepared = await preparedOnThisConnection(tx);
      expect(prepared.some((s) => s.includes('$101'))).toBe(false);
    });
  });

  describe('a reusable query', () => {
    const insertTeam = reusableQuery((db) =>
      db
        .insert(teams)
        .values({
          id: sql.placeholder('id'),
          name: sql.placeholder('name'),
          planCode: 'starter',
          subscriptionStatus: 'active',
        })
        .returning({ id: teams.id, name: teams.name, createdAt: teams.createdAt })
        .prepare('test_insert_team'),
    );
    const teamName = reusableQuery((db) =>
      db
        .select({ name: teams.name })
        .from(teams)
        .where(eq(teams.id, sql.placeholder('id')))
        .prepare('test_team_name'),
    );

    it("runs inside the caller's transaction: its writes roll back with it", async () => {
      const id = randomUUID();
      await expect(
        database.db.transaction(async (tx) => {
          const [inserted] = await insertTeam(tx).execute({ id, name: 'Inside' });
          // Mapped like any drizzle result.
          expect(inserted?.createdAt).toBeInstanceOf(Date);
          // The same transaction sees the row; the pool, outside it, does not.
          expect(await teamName(tx).execute({ id })).toEqual([{ name: 'Inside' }]);
          expect(await teamName(database.db).execute({ id })).toEqual([]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await teamName(database.db).execute({ id })).toEqual([]);
    });

    it('takes new values on every use, on the pool and in transactions alike', async () => {
      const first = randomUUID();
      const second = randomUUID();
      await insertTeam(database.db).execute({ id: first, name: 'First' });
      await database.db.transaction((tx) => insertTeam(tx).execute({ id: second, name: 'Second' }));
      expect(await teamName(database.db).execute({ id: first })).toEqual([{ name: 'First' }]);
      expect(await teamName(database.db).execute({ id: second })).toEqual([{ name: 'Second' }]);
    });
  });
});

import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teams } from '@/db/schema';
import { randomUUID } from '@/server/lib/ids';
import { createTestDatabase, type TestDatabase } from '../support/database';

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
});

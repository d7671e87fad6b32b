import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeys } from '@/db/schema';
import {
  IDEMPOTENCY_KEY_RETENTION_MS,
  purgeIdempotencyKeys,
} from '@/server/idempotency/purge-idempotency-keys';
import { createTeam } from '@/server/teams/manage-teams';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

describe('idempotency key retention', () => {
  it('deletes keys older than 30 days and keeps younger ones, across several batches', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const { team } = await createTeam(
      database.db,
      { name: 'Purge', adminEmail: 'owner@purge.test' },
      () => now,
    );
    const old = new Date(now.getTime() - IDEMPOTENCY_KEY_RETENTION_MS - 1000);
    const young = new Date(now.getTime() - IDEMPOTENCY_KEY_RETENTION_MS + 60_000);
    const rows = (count: number, prefix: string, createdAt: Date) =>
      Array.from({ length: count }, (_, i) => ({
        teamId: team.id,
        key: `${prefix}-${i}`,
        operation: 'cases.create',
        requestHash: 'h',
        responseStatus: 201,
        responseBody: {},
        createdAt,
      }));
    // More old keys than one batch holds, so the loop has to come back for the rest.
    await database.db.insert(idempotencyKeys).values(rows(6_000, 'old', old));
    await database.db.insert(idempotencyKeys).values(rows(3, 'young', young));

    expect(await purgeIdempotencyKeys(database.db, () => now)).toBe(6_000);

    const left = await database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.teamId, team.id));
    expect(left.map((r) => r.key).sort()).toEqual(['young-0', 'young-1', 'young-2']);
  });
});

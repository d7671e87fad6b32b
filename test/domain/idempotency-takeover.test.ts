/**
 * An idempotent request whose preparation outlives its claim (STALE_LOCK_MS: a batch waiting its
 * turn in the slow-hash queue behind many teams) may be taken over by a client's retry. Then the
 * retry does the work, once, and the first request must not commit a second time (found by the
 * review of issue 37's fair hashing, which moved preparation inside the claim).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '@/db/client';
import { auditLog, idempotencyKeys } from '@/db/schema';
import { recordAudit, SYSTEM_ACTOR } from '@/server/audit/record-audit';
import { runIdempotent } from '@/server/idempotency/run-idempotent';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  teamId = (await createTeam(database.db, { name: 'Takeover', adminEmail: 'o@takeover.test' }, systemClock))
    .team.id;
});

afterAll(async () => {
  await database?.close();
});

describe('runIdempotent', () => {
  it('a request whose claim was taken over while it prepared does not commit: the retry’s work is the one kept', async () => {
    const scope = () => ({
      teamId,
      livemode: true,
      key: 'slow-batch',
      operation: 'cases.batch',
      request: { cases: ['same'] },
      status: 200,
      casesOf: () => ({ caseIds: [] }),
    });
    // What each request's work leaves in the database: an audit entry, in its transaction.
    const work = (by: string) => async (tx: Tx) => {
      await recordAudit(tx, {
        teamId,
        actor: SYSTEM_ACTOR,
        at: new Date(),
        action: 'test.work',
        target: by,
        details: {},
      });
      return { by };
    };
    const key = and(eq(idempotencyKeys.teamId, teamId), eq(idempotencyKeys.key, 'slow-batch'));
    const first = runIdempotent(database.db, scope(), systemClock, {
      prepare: async () => {
        // As if this preparation had waited past STALE_LOCK_MS: the claim looks dead, and the
        // client's retry takes it over and finishes first.
        await database.db
          .update(idempotencyKeys)
          .set({ lockedAt: new Date(Date.now() - 5 * 60_000) })
          .where(key);
        const retry = await runIdempotent(database.db, scope(), systemClock, {
          prepare: async () => null,
          commit: work('retry'),
        });
        expect(retry).toEqual({ body: { by: 'retry' }, replayed: false });
        return null;
      },
      commit: work('first'),
    });
    await expect(first).rejects.toMatchObject({ appCode: 'IDEMPOTENCY_KEY_IN_USE' });
    // The first request's work was rolled back with its refusal: only the retry's stayed.
    const done = await database.db.select().from(auditLog).where(eq(auditLog.action, 'test.work'));
    expect(done.map((row) => row.target)).toEqual(['retry']);
    const [row] = await database.db.select().from(idempotencyKeys).where(key);
    expect(row?.responseBody).toEqual({ by: 'retry' });
    // A repeat now replays the retry's answer.
    const repeat = await runIdempotent(database.db, scope(), systemClock, {
      prepare: async () => null,
      commit: async () => ({ by: 'repeat' }),
    });
    expect(repeat).toEqual({ body: { by: 'retry' }, replayed: true });
  });
});

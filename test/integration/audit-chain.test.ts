/**
 * The audit chain in the running service (issue 29): the worker seals what the console and the API
 * audit within seconds, and the operator's `audit verify` says the chain holds, or exits 1 naming
 * the first entry edited in the database.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';

let database: TestDatabase;
let app: RunningApp;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url, env: { JOB_TICK_SECONDS: '1' } });
  const created = await createTeam(
    database.db,
    { name: 'Ledger', adminEmail: 'owner@ledger.test' },
    systemClock,
  );
  teamId = created.team.id;
  const api = apiClient(app.baseUrl, created.testKey.token);
  for (const n of [1, 2, 3]) {
    const res = await api.post('/v1/cases/', {
      subject_email: `p${n}@ledger.test`,
      verification_methods: { email: true },
    });
    expect(res.status, res.text).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const verify = () => runCli(['audit', 'verify', '--team', teamId], { DATABASE_URL: database.url });

describe('audit verify', () => {
  it('finds every entry sealed by the worker within seconds, and the chain whole', async () => {
    const rows = await eventually(async () => {
      const all = await database.db.select().from(auditLog).where(eq(auditLog.teamId, teamId));
      return all.length >= 3 && all.every((row) => row.hash !== null) ? all : undefined;
    }, 20_000);
    expect(await verify()).toEqual({
      ok: true,
      teams: [{ team_id: teamId, entries: rows.length, sealed_through: rows.length }],
    });
  });

  it('exits 1 naming the entry whose row was edited after it was sealed', async () => {
    const [victim] = await database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.teamId, teamId))
      .orderBy(auditLog.chainSeq);
    await database.db
      .update(auditLog)
      .set({ target: 'someone-else' })
      .where(eq(auditLog.id, victim?.id ?? ''));
    await expect(verify()).rejects.toThrow(
      new RegExp(
        `the audit chain breaks at entry ${victim?.id} \\(place 1\\): its row was changed after it was sealed \\(target\\)`,
      ),
    );
  });
});

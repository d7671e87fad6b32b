import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, queueOptions } from '@/server/platform/jobs/catalog';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let app: RunningApp | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

describe('job queues at boot', () => {
  it('makes a tick queue created with an older policy again with the current one, and drops the old cron schedules', async () => {
    // The database as an earlier version left it: the expiry ticks' queue with `stately`.
    const earlier = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false });
    await earlier.start();
    await earlier.createQueue(QUEUES.casesExpire, { policy: 'stately', retryLimit: 0 });
    // And the nightly cron schedule the purges once ran on, which would now run them twice a day.
    await earlier.createQueue(QUEUES.dataRetention, { policy: 'short', retryLimit: 0 });
    await earlier.schedule(QUEUES.dataRetention, '47 3 * * *');
    await earlier.stop({ graceful: false, close: true });

    app = await startApp({ databaseUrl: database.url, env: { JOB_TICK_SECONDS: '1' } });

    const current = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false });
    await current.start();
    try {
      const expected = queueOptions(QUEUES.casesExpire, { webhookTimeoutMs: 1 });
      expect((await current.getQueue(QUEUES.casesExpire))?.policy).toBe(expected.policy);
      expect(expected.policy).not.toBe('stately');
      expect(await current.getSchedules(QUEUES.dataRetention)).toEqual([]);
    } finally {
      await current.stop({ graceful: false, close: true });
    }
  });
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '@/db/client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.sql`create table turn_lock (id int primary key)`;
  await database.sql`insert into turn_lock values (1)`;
});

afterAll(async () => {
  await database?.close();
});

/** Sends a statement now (drizzle's and postgres.js's queries start when first awaited). */
function started<T>(query: PromiseLike<T>): Promise<T> {
  return Promise.resolve(query);
}

/** Settles `promise` within `ms`, or answers 'still waiting'. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([
    promise,
    new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms)),
  ]);
}

describe('a pool’s statements take turns for its connections', () => {
  it('a statement waits for the first connection that frees, not behind a statement that waits for a lock', async () => {
    const pool: Database = connectDatabase(database.url, { max: 2, settings: { application_name: 'turns' } });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    // Another session holds the row's lock until the test lets go.
    const holder = database.sql.begin(async (tx) => {
      await tx`select id from turn_lock where id = 1 for update`;
      await held;
    });
    try {
      // Both connections open and idle, as under load (postgres.js sends a statement on a busy
      // connection only once that connection is open).
      await Promise.all([
        pool.db.execute(sql`select pg_sleep(0.05)`),
        pool.db.execute(sql`select pg_sleep(0.05)`),
      ]);
      // Both connections busy: one waits for the lock, the other sleeps a moment.
      const blocked = started(pool.db.execute(sql`update turn_lock set id = id where id = 1`));
      await eventually(async () => {
        const [waiting] = await database.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where application_name = 'turns' and wait_event_type = 'Lock'`;
        return waiting?.n === 1;
      });
      const sleeping = started(pool.db.execute(sql`select pg_sleep(0.3)`));
      const quick = started(pool.db.execute(sql`select 1 as one`));

      // The quick statement runs once the sleeper's connection frees, while the lock is still held.
      const answered = await within(quick, 5000);
      expect(answered).not.toBe('still waiting');
      expect(await within(blocked, 0)).toBe('still waiting');
      await sleeping;
      release();
      await blocked;
    } finally {
      release();
      await holder;
      await pool.close();
    }
  });
});

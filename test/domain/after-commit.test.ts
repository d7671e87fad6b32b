import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterCommit } from '@/db/after-commit';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

describe('afterCommit', () => {
  it('runs a hook once its transaction has committed, in the order given', async () => {
    const ran: string[] = [];
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      afterCommit(tx, () => ran.push('first'));
      afterCommit(tx, () => ran.push('second'));
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['first', 'second']);
  });

  it('never runs a hook of a transaction that rolled back', async () => {
    const ran: string[] = [];
    await expect(
      database.db.transaction(async (tx) => {
        afterCommit(tx, () => ran.push('rolled back'));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(ran).toEqual([]);
  });

  it('refuses a savepoint: its hooks would have to wait for the outermost commit', async () => {
    await database.db.transaction(async (tx) => {
      await tx.transaction(async (savepoint) => {
        expect(() => afterCommit(savepoint, () => undefined)).toThrow(
          'afterCommit is not supported inside a savepoint',
        );
      });
    });
  });

  it('runs at once on the pool itself (each statement commits alone), and a failing hook leaves the commit standing', async () => {
    const ran: string[] = [];
    afterCommit(database.db, () => ran.push('now'));
    expect(ran).toEqual(['now']);
    const committed = await database.db.transaction(async (tx) => {
      afterCommit(tx, () => {
        throw new Error('a hook fails');
      });
      afterCommit(tx, () => ran.push('after the failing one'));
      return 'committed';
    });
    expect(committed).toBe('committed');
    expect(ran).toEqual(['now', 'after the failing one']);
  });
});

describe('the pool’s connection usage', () => {
  it('counts open connections, and as used those holding a transaction or running a statement', async () => {
    const { connectDatabase } = await import('@/db/client');
    const pool = connectDatabase(database.url, { max: 3 });
    try {
      expect(pool.connectionUsage()).toEqual({ used: 0, idle: 0, max: 3 });
      await pool.sql`select 1`;
      expect(pool.connectionUsage()).toEqual({ used: 0, idle: 1, max: 3 });
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inside = () => {};
      const begun = new Promise<void>((resolve) => {
        inside = resolve;
      });
      const transaction = pool.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        inside();
        await held;
      });
      await begun;
      // A statement on the pool beside it, while the transaction holds its connection.
      // (drizzle runs a query when it is awaited: `then` starts it.)
      const sleeping = pool.db.execute(sql`select pg_sleep(0.3)`).then(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(pool.connectionUsage()).toEqual({ used: 2, idle: 0, max: 3 });
      await sleeping;
      expect(pool.connectionUsage()).toEqual({ used: 1, idle: 1, max: 3 });
      release();
      await transaction;
      expect(pool.connectionUsage()).toEqual({ used: 0, idle: 2, max: 3 });
    } finally {
      await pool.close();
    }
    expect(pool.connectionUsage()).toEqual({ used: 0, idle: 0, max: 3 });
  });
});

import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectDatabase } from '@/db/client';
import { pipelined } from '@/db/pipeline';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { teams, webhookEndpoints } from '@/db/schema';
import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
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

  it("connects over the server's Unix socket when the URL names its directory as ?host=", async () => {
    const [settings] = await database.sql<[{ directories: string }]>`
      select current_setting('unix_socket_directories') as directories`;
    const url = new URL(database.url);
    url.searchParams.set('host', settings?.directories.split(',')[0]?.trim() ?? '');
    const overSocket = connectDatabase(url.toString(), { max: 1 });
    try {
      const [row] = await overSocket.sql<[{ address: string | null; database: string }]>`
        select inet_client_addr() as address, current_database() as database`;
      // No client address: the connection came over the socket, not TCP.
      expect(row).toEqual({ address: null, database: url.pathname.slice(1) });
    } finally {
      await overSocket.close();
    }

    // A socket with no server behind it reads as the database being unreachable (answered 503).
    url.searchParams.set('host', '/nonexistent-socket-directory');
    const nowhere = connectDatabase(url.toString(), { max: 1 });
    try {
      const error = await nowhere.sql`select 1`.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toMatchObject({ code: 'ENOENT', syscall: 'connect' });
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await nowhere.close();
    }
  });

  it("sends a transaction's pipelined statements to the server in one write", async () => {
    const connect = net.connect.bind(net);
    const opened: net.Socket[] = [];
    const spy = vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
      const socket = connect(...args);
      opened.push(socket);
      return socket;
    }) as typeof net.connect);
    const client = connectDatabase(database.url, { max: 1 });
    try {
      await client.sql`select 1`;
      const [socket] = opened;
      if (!socket) throw new Error('no connection opened');
      let writes = 0;
      for (const method of ['_write', '_writev'] as const) {
        const underlying = socket[method]?.bind(socket);
        if (!underlying) continue;
        (socket as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          writes += 1;
          return (underlying as (...a: unknown[]) => unknown)(...args);
        };
      }
      // postgres.js hands over any message of 1 KiB or more at once: three such statements
      // would be three system calls, each waking the server.
      const long = 'x'.repeat(2048);
      const threeStatements = () =>
        client.db.transaction(async (tx) => {
          writes = 0;
          const sent = await pipelined(
            () => tx.execute(sql`select length(${long}) as n`),
            () => tx.execute(sql`select octet_length(${long}) as n`),
            () => tx.execute(sql`select char_length(${long}) as n`),
          );
          return { writes, lengths: sent.map((rows) => (rows as unknown as Array<{ n: number }>)[0]?.n) };
        });
      // The first time, each statement is prepared (its parameter types asked for) on its own.
      await threeStatements();
      expect(await threeStatements()).toEqual({ writes: 1, lengths: [2048, 2048, 2048] });
      expect(opened).toHaveLength(1);
    } finally {
      spy.mockRestore();
      await client.close();
    }
  });

  it('fails only the query when a connection is cut as it starts up: nothing escapes unhandled', async () => {
    // A proxy that resets the first connection at the first statement sent once it is ready. With
    // fetch_types that statement is the driver's own array-types query, whose failure postgres.js
    // never handles (porsager/postgres#1192): a process logged "unhandledRejection: read
    // ECONNRESET" when its database stopped as a connection started.
    const target = new URL(database.url);
    let connections = 0;
    const cutStatements: string[] = [];
    const proxy = net.createServer((client) => {
      connections += 1;
      const first = connections === 1;
      let ready = false;
      let fromServer = Buffer.alloc(0);
      const server = net.connect(Number(target.port), target.hostname);
      server.on('data', (chunk: Buffer) => {
        client.write(chunk);
        // Messages are a type byte and a length that counts itself; Z is ReadyForQuery.
        fromServer = Buffer.concat([fromServer, chunk]);
        while (fromServer.length >= 5 && fromServer.length >= 1 + fromServer.readUInt32BE(1)) {
          if (fromServer[0] === 0x5a) ready = true;
          fromServer = fromServer.subarray(1 + fromServer.readUInt32BE(1));
        }
      });
      client.on('data', (chunk: Buffer) => {
        if (first && ready) {
          cutStatements.push(chunk.toString('latin1'));
          server.destroy();
          client.resetAndDestroy();
          return;
        }
        server.write(chunk);
      });
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
      client.on('close', () => server.destroy());
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String((proxy.address() as AddressInfo).port);
    const viaCut = connectDatabase(viaProxy.toString(), { max: 1 });
    try {
      // The statement the cut falls on fails, as an outage fails it (answered 503)...
      await expect(viaCut.sql`select 1 as one`).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(cutStatements).toHaveLength(1);
      expect(cutStatements[0]).toContain('select 1 as one');
      // ...and nothing else: no rejection escapes, and the next statement is answered.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled).toEqual([]);
      expect(await viaCut.sql`select 2 as two`).toEqual([{ two: 2 }]);
      expect(connections).toBe(2);
    } finally {
      process.off('unhandledRejection', record);
      await viaCut.close();
      proxy.close();
    }
  });

  it('reads and writes arrays without asking the server for its array types', async () => {
    const [team] = await database.db
      .insert(teams)
      .values({ name: 'Arrays', planCode: 'starter', subscriptionStatus: 'active' })
      .returning({ id: teams.id });
    const [endpoint] = await database.db
      .insert(webhookEndpoints)
      .values({
        teamId: team?.id ?? '',
        livemode: true,
        url: 'https://example.test/hook',
        secret: 'whsec_x',
        events: ['case.closed', 'case.created'],
      })
      .returning({ events: webhookEndpoints.events });
    expect(endpoint?.events).toEqual(['case.closed', 'case.created']);
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

    it("runs a raw statement prepared once (prepareSql) inside the caller's transaction", async () => {
      const renameTeam = reusableQuery((db) =>
        prepareSql<{ name: string }>(
          db,
          sql`update ${teams} set ${sql.identifier(teams.name.name)} = ${sql.placeholder('name')}
              where ${teams.id} = ${sql.placeholder('id')} returning ${sql.identifier(teams.name.name)}`,
          'test_rename_team',
        ),
      );
      const id = randomUUID();
      await insertTeam(database.db).execute({ id, name: 'Before' });
      await expect(
        database.db.transaction(async (tx) => {
          // Rows come back as PostgreSQL names them, unmapped.
          expect(await renameTeam(tx).execute({ id, name: 'After' })).toEqual([{ name: 'After' }]);
          expect(await teamName(tx).execute({ id })).toEqual([{ name: 'After' }]);
          expect(await teamName(database.db).execute({ id })).toEqual([{ name: 'Before' }]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await teamName(database.db).execute({ id })).toEqual([{ name: 'Before' }]);
      expect(await renameTeam(database.db).execute({ id, name: 'Pool' })).toEqual([{ name: 'Pool' }]);
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

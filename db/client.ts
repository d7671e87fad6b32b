import path from 'node:path';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle: same query API as `Db`. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything that can run queries: the pool or an open transaction. */
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  sql: postgres.Sql;
  close: () => Promise<void>;
}

/** Statements with more parameters than this are bulk writes whose shape varies with their size. */
const MAX_PREPARED_PARAMETERS = 100;

type Unsafe = postgres.Sql['unsafe'];

/**
 * drizzle's postgres.js adapter runs every query through postgres.js's `unsafe` unprepared (unless
 * built with `.prepare()`), whatever the client's own `prepare` option says (drizzle-orm#6096, open
 * in 0.45), and postgres.js runs an unprepared query with parameters in two round trips: it first
 * asks the server for the parameter types, and stops pipelining meanwhile. Preparing them (each
 * connection keeps its own named statements) makes a query one round trip and lets the queries of
 * a transaction pipeline: a case creation is four round trips in all (README, "Performance").
 * Neither library offers a setting for it, so this is the one place that leans on how the adapter
 * calls its client (`unsafe`, `begin`, `savepoint`); `test/integration/database-client.test.ts`
 * fails if a new drizzle stops going through them. Bulk statements, whose text changes with their
 * row count, stay unprepared so they do not fill every connection's statement cache.
 */
function preparingStatements<T extends postgres.Sql | postgres.TransactionSql>(sql: T): T {
  return new Proxy(sql, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'unsafe') {
        return ((query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) =>
          (value as Unsafe).call(
            target,
            query,
            params as postgres.ParameterOrJSON<never>[],
            params && params.length > 0 && params.length <= MAX_PREPARED_PARAMETERS
              ? { ...options, prepare: true }
              : options,
          )) as Unsafe;
      }
      if (property === 'begin' || property === 'savepoint') {
        // The transaction's own client gets the same treatment.
        return (...args: unknown[]) => {
          const callback = args.at(-1) as (inner: postgres.TransactionSql) => unknown;
          const rest = args.slice(0, -1);
          return (value as (...a: unknown[]) => unknown).call(
            target,
            ...rest,
            (inner: postgres.TransactionSql) => callback(preparingStatements(inner)),
          );
        };
      }
      return value;
    },
  });
}

/**
 * A database URL may name a Unix socket directory as `?host=/dir` (libpq's and node-postgres's
 * form; the embedded server's processes use it). postgres.js takes the directory as its `host`
 * option instead and would send an unknown query parameter to the server as a setting.
 */
function postgresTarget(url: string): { url: string; host?: string } {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host');
  if (!host?.startsWith('/')) return { url };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), host };
}

export function connectDatabase(
  url: string,
  options: { max?: number; settings?: Record<string, string> } = {},
): Database {
  const target = postgresTarget(url);
  const sql = postgres(target.url, {
    ...(target.host ? { host: target.host } : {}),
    max: options.max ?? 20,
    onnotice: () => {},
    // While the database cannot be reached, a query must fail within 2 s (the request is then
    // answered 503) rather than wait: a connection attempt gives up after 1.5 s (the driver's
    // default is 30), and the next attempt waits a fixed quarter second, where the driver's
    // default back-off grows to 20 s and holds every query queued behind it that long.
    connect_timeout: 1.5,
    backoff: () => 0.25,
    // Dates travel as ISO strings with their zone; keep the server in UTC so `date_trunc` and
    // friends agree with the JS side.
    connection: { TimeZone: 'UTC', ...options.settings },
  });
  const db = drizzle(preparingStatements(sql), { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}

export const MIGRATIONS_FOLDER = path.resolve(process.cwd(), 'db/migrations');

/**
 * Applies the committed migrations. A session advisory lock on a dedicated one-connection client
 * makes concurrent starts (two app processes, or the app and the CLI) take turns instead of
 * racing on the same DDL.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const target = postgresTarget(url);
  const connection = postgres(target.url, {
    ...(target.host ? { host: target.host } : {}),
    max: 1,
    onnotice: () => {},
  });
  try {
    await connection`select pg_advisory_lock(727001)`;
    await migrate(drizzle(connection, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await connection.end({ timeout: 5 });
  }
}

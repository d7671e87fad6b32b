import path from 'node:path';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { runningCommitHooks } from './after-commit';
import {
  type ConnectionUsage,
  type ConnectionUsageTracker,
  connectionUsageTracker,
} from './connection-usage';
import * as schema from './schema';
import { traceStatement, tracingStatements } from './statement-spans';
import { statementTurns } from './statement-turns';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle: same query API as `Db`. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything that can run queries: the pool or an open transaction. */
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  sql: postgres.Sql;
  /** The pool's connections now: open and busy, open and idle (metrics read it). */
  connectionUsage: () => ConnectionUsage;
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
 * a transaction pipeline: a case creation is four round trips in all (docs/contributors/performance.md).
 * Neither library offers a setting for it, so this is the one place that leans on how the adapter
 * calls its client (`unsafe`, `begin`, `savepoint`); `test/integration/database-client.test.ts`
 * fails if a new drizzle stops going through them. Bulk statements, whose text changes with their
 * row count, stay unprepared so they do not fill every connection's statement cache.
 */
function preparingStatements<T extends postgres.Sql | postgres.TransactionSql>(
  sql: T,
  usage?: ConnectionUsageTracker,
  poolMode: PoolMode = 'session',
  inTurn?: <Q>(query: Q) => Q,
): T {
  return new Proxy(sql, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'unsafe') {
        return ((query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) => {
          const statement = (value as Unsafe).call(
            target,
            query,
            params as postgres.ParameterOrJSON<never>[],
            poolMode === 'transaction'
              ? // Behind a transaction pooler the next statement may run on another server connection,
                // where a named statement does not exist: every statement goes unnamed.
                { ...options, prepare: false }
              : params && params.length > 0 && params.length <= MAX_PREPARED_PARAMETERS
                ? { ...options, prepare: true }
                : options,
          );
          if (tracingStatements()) traceStatement(statement, query);
          // The pool's own statements hold a connection while they run, and wait their turn for
          // one (db/statement-turns.ts); a transaction's are counted with it.
          const counted = usage ? usage.countStatement(statement) : statement;
          return inTurn ? inTurn(counted) : counted;
        }) as Unsafe;
      }
      if (property === 'begin' || property === 'savepoint') {
        // The transaction's own client gets the same treatment.
        return (...args: unknown[]) => {
          const callback = args.at(-1) as (inner: postgres.TransactionSql) => unknown;
          const rest = args.slice(0, -1);
          const run = () =>
            (value as (...a: unknown[]) => Promise<unknown>).call(
              target,
              ...rest,
              (inner: postgres.TransactionSql) => callback(preparingStatements(inner, undefined, poolMode)),
            );
          return usage && property === 'begin' ? usage.countTransaction(run) : run();
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
export function postgresTarget(url: string): { url: string; host?: string } {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host');
  if (!host?.startsWith('/')) return { url };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), host };
}

/**
 * What every connection of the service's own shares. `fetch_types: false`: postgres.js would
 * otherwise ask each new connection for the server's array types first and drop that query's
 * promise, so a connection cut at that moment (a database stopping, a pooler restarting) ends in an
 * unhandled rejection no caller can catch (porsager/postgres#1192, open in 3.4.9). Nothing needs
 * those types: drizzle writes and reads its array columns in PostgreSQL's array text itself, and
 * raw statements pass arrays as that text (`'{a,b}'::uuid[]`).
 */
export const CONNECTION_OPTIONS = { onnotice: () => {}, fetch_types: false } as const;

/**
 * How DATABASE_URL is reached: `session` (the database itself, or a pooler in session mode) or
 * `transaction` (a transaction pooler such as PgBouncer's `pool_mode = transaction`, where a server
 * connection serves a client for one transaction only).
 */
export type PoolMode = 'session' | 'transaction';

export function connectDatabase(
  url: string,
  options: { max?: number; settings?: Record<string, string>; poolMode?: PoolMode } = {},
): Database {
  const poolMode = options.poolMode ?? 'session';
  const target = postgresTarget(url);
  const max = options.max ?? 20;
  const usage = connectionUsageTracker(max);
  const sql = postgres(target.url, {
    ...(target.host ? { host: target.host } : {}),
    ...CONNECTION_OPTIONS,
    max,
    // Unnamed statements only, the tagged ones too (see preparingStatements).
    ...(poolMode === 'transaction' ? { prepare: false } : {}),
    // postgres.js documents `socket` (README, "Custom socket") but its types leave it out.
    ...({ socket: usage.socket } as object),
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
  const db = runningCommitHooks(
    drizzle(preparingStatements(sql, usage, poolMode, statementTurns(max)), { schema }),
  );
  return { db, sql, connectionUsage: usage.usage, close: () => sql.end({ timeout: 5 }) };
}

export const MIGRATIONS_FOLDER = path.resolve(process.cwd(), 'db/migrations');

/**
 * Applies the committed migrations. A session advisory lock on a dedicated one-connection client
 * makes concurrent starts (two app processes, or the app and the CLI) take turns instead of
 * racing on the same DDL. `url` must reach the database itself, never a transaction pooler (which
 * would hand the lock's session to another client): callers pass DIRECT_DATABASE_URL's.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const target = postgresTarget(url);
  const connection = postgres(target.url, {
    ...(target.host ? { host: target.host } : {}),
    ...CONNECTION_OPTIONS,
    max: 1,
    // Told apart in pg_stat_activity: the one session that holds a session-level lock.
    connection: { application_name: 'vouch-migrate' },
  });
  try {
    await connection`select pg_advisory_lock(727001)`;
    await migrate(drizzle(connection, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await connection.end({ timeout: 5 });
  }
}

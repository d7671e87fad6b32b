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

export function connectDatabase(
  url: string,
  options: { max?: number; settings?: Record<string, string> } = {},
): Database {
  const sql = postgres(url, {
    max: options.max ?? 20,
    onnotice: () => {},
    // Dates travel as ISO strings with their zone; keep the server in UTC so `date_trunc` and
    // friends agree with the JS side.
    connection: { TimeZone: 'UTC', ...options.settings },
  });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}

export const MIGRATIONS_FOLDER = path.resolve(process.cwd(), 'db/migrations');

/**
 * Applies the committed migrations. A session advisory lock on a dedicated one-connection client
 * makes concurrent starts (two app processes, or the app and the CLI) take turns instead of
 * racing on the same DDL.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const connection = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await connection`select pg_advisory_lock(727001)`;
    await migrate(drizzle(connection, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await connection.end({ timeout: 5 });
  }
}

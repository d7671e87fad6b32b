import type { SQL } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { PostgresJsSession } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import type { Queryable } from './client';

// biome-ignore lint/suspicious/noExplicitAny: the session's schema types play no part here
type Session = PostgresJsSession<postgres.Sql, any, any>;

/**
 * The one reach into drizzle's internals: a handle's session, which holds the connection it runs
 * on and builds prepared queries. drizzle has no public way to run a prepared query on another
 * handle (drizzle-orm#2826, open in 0.45), and building statements once is worth about 12 % of the
 * app's CPU per case creation and 15 % per case list (`bench/ab.ts`, commits 92762c2 and d7d0c59).
 * `test/integration/database-client.test.ts` fails if a new drizzle moves the client or changes
 * how a session prepares a query.
 */
function sessionOf(db: Queryable): Session {
  return db._.session as unknown as Session;
}

/**
 * A query built once per process and run on whatever handle the caller holds, the pool or an open
 * transaction. On the hot paths, drizzle spent more CPU building a statement's text and parameter
 * list than PostgreSQL spent running it. A query prepared with `.prepare()` is built once, but it
 * stays bound to the handle it was built on, so it could not run inside a transaction
 * (drizzle-orm#2826). This rebinds it to the caller's connection on each use (see `sessionOf`); the
 * built text, parameter encoders and result mapping are shared.
 *
 * Values go in through `sql.placeholder(name)` and are passed to `execute({ name: value })`. A
 * placeholder in an insert's values goes through its column's encoder; one compared with a column
 * (`eq(column, sql.placeholder(…))`) is sent as it is, so dates go there as ISO strings. A JS-side
 * default (`$defaultFn`) would be computed once, at build time, so every value such a column needs
 * must be a placeholder. The query keeps the logger of the handle it was first built on.
 */
export function reusableQuery<Q extends PgPreparedQuery<PreparedQueryConfig>>(
  build: (db: Queryable) => Q,
): (db: Queryable) => Q {
  let built: Q | undefined;
  return (db) => {
    built ??= build(db);
    const { client } = sessionOf(db);
    return Object.create(built, { client: { value: client } }) as Q;
  };
}

const dialect = new PgDialect();

/**
 * A raw SQL statement as a prepared query, for `reusableQuery` (drizzle's `db.execute` has no
 * `.prepare()`). Rows come back as PostgreSQL sends them: column names as they are, no mapping.
 */
export function prepareSql<Row>(db: Queryable, query: SQL, name: string) {
  return sessionOf(db).prepareQuery<PreparedQueryConfig & { execute: Row[] }>(
    dialect.sqlToQuery(query),
    undefined,
    name,
    false,
  );
}

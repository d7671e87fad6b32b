import { getTableName, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

/**
 * Names for raw SQL, taken from the schema's column objects so that renaming a column's property
 * fails the type-check at every statement that uses it. Interpolating a column in drizzle's `sql`
 * qualifies it (`"cases"."status"`), which PostgreSQL refuses where only a bare name may stand: an
 * INSERT's column list, an UPDATE's SET targets, a CTE's output read through its own name. These
 * give the bare name (the column's name in the database). Aliased tables use drizzle's `alias()`,
 * whose columns render with the alias (`"c"."status"`) and which `tableAs` introduces.
 */
export function name(column: PgColumn): SQL {
  return sql`${sql.identifier(column.name)}`;
}

/** A column list, bare names separated by commas: `("team_id", "livemode", …)` without the brackets. */
export function names(...columns: PgColumn[]): SQL {
  return sql.join(columns.map(name), sql`, `);
}

/**
 * A table under the name of its `alias()` (`"cases" "c"`), where a FROM, JOIN or UPDATE introduces
 * it: interpolated alone, an alias renders as its bare name.
 */
export function tableAs(table: PgTable, aliased: PgTable): SQL {
  return sql`${table} ${sql.identifier(getTableName(aliased))}`;
}

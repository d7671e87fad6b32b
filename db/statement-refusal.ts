import { type SQL, sql } from 'drizzle-orm';

/**
 * A statement that does several things at once can find, part-way, that one of them must not
 * happen as planned (a charge the allowance no longer covers once the team's lock is held). It then
 * refuses itself: `refuseStatement` aborts it, and every write it made with it, with a SQLSTATE of
 * our own (the function is migration 0035's), which `isStatementRefusal` recognises so the caller
 * can take the long way instead. Use it in a `case` branch: PostgreSQL evaluates only the branch it
 * takes, and the function is volatile, so it is never folded in ahead of time.
 */
export const STATEMENT_REFUSED_SQLSTATE = 'VX001';

/** Aborts the statement being run, naming why (the reason reaches the error's message only). */
export function refuseStatement(reason: string): SQL {
  return sql`vouch_refuse_statement(${sql.raw(`'${reason.replace(/[^a-z_ ]/g, '')}'`)})`;
}

/** Whether a failed query (drizzle's error, or postgres.js's inside it) was refused by refuseStatement. */
export function isStatementRefusal(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    if ((current as { code?: unknown }).code === STATEMENT_REFUSED_SQLSTATE) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

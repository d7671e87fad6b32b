import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { errorFields, logger } from '@/server/platform/logger';
import { reportOutage } from './outage-log';

/**
 * A job's failure as pg-boss keeps it. pg-boss stores what a handler throws (or a failed job's
 * output) in the job's row (`pgboss.job.output`), serialized with serialize-error: every enumerable
 * property, the cause included. drizzle's error for a failed statement carries the statement and
 * every parameter (people's e-mail addresses, receivers' answers) in its message and `params`,
 * and postgres.js's error, its cause, may quote the input in `where`. A JobFailure keeps what the
 * log keeps (`errorFields`): the database's own message, the SQLSTATE, the stack's frames.
 */
export class JobFailure extends Error {
  readonly sqlstate?: string;

  constructor(error: unknown) {
    const fields = errorFields(error);
    super(fields.error);
    this.name = 'JobFailure';
    if (fields.sqlstate) this.sqlstate = fields.sqlstate;
    this.stack = fields.stack
      ? `${this.name}: ${this.message}\n${fields.stack}`
      : `${this.name}: ${this.message}`;
  }
}

/**
 * A job's failure, logged (one line, as the log describes errors; while the database is
 * unreachable, the outage line instead of one per job) and made fit for pg-boss's row.
 */
export function jobFailure(queue: string, error: unknown, fields: Record<string, unknown> = {}): JobFailure {
  if (isDatabaseUnavailable(error)) reportOutage();
  else logger.error('job failed', { queue, ...fields, ...errorFields(error) });
  return new JobFailure(error);
}

/** A job handler whose failures reach pg-boss and the log only through `jobFailure`. */
export function failingSafely<Args extends unknown[], Result>(
  queue: string,
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      throw jobFailure(queue, error);
    }
  };
}

import { AppError } from './errors';

/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing
 * connections, or the connection lost), as opposed to a statement that failed. Such a request is
 * answered 503 with Retry-After (the client may retry; nothing is wrong with its request), and
 * everything resumes by itself once the database is back. (A connection refused by another
 * service a request needed reads the same, and deserves the same answer.)
 */
const NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
/** postgres.js's own codes for a connection it could not make or lost. */
const DRIVER_CODES = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);
/**
 * SQLSTATEs: class 08 (connection exception), the server shutting down or starting
 * (57P01-57P03), and too many connections (53300).
 */
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
/**
 * node-postgres (pg-boss's driver) reports a lost connection with a message and no code: the
 * connection ending, a query sent on a client whose connection already failed, and its pool
 * giving up waiting for a connection it cannot make.
 */
const PG_CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 6; depth += 1) {
    const { code, message, syscall } = current as { code?: unknown; message?: unknown; syscall?: unknown };
    if (typeof code === 'string' && (NODE_CODES.has(code) || DRIVER_CODES.has(code) || SQLSTATE.test(code))) {
      return true;
    }
    // A Unix socket whose server is down is gone from its directory.
    if (code === 'ENOENT' && syscall === 'connect') return true;
    if (typeof message === 'string' && PG_CONNECTION_LOST.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Seconds a client is asked to wait before it retries while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The error a request gets while the database cannot be reached. */
export function databaseUnavailableError(): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The service cannot reach its database right now; retry shortly.',
    {
      'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
    },
  );
}

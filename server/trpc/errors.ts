import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ZodError } from 'zod';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../lib/database-unavailable';

const DATABASE_UNAVAILABLE_DETAIL = 'The service cannot reach its database right now; retry shortly.';
const databaseRetryAfter = { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) };

/** The error a request gets while the database cannot be reached. */
export function databaseUnavailableError(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_DETAIL, databaseRetryAfter);
}

/**
 * The one table that knows how an application error looks on the wire. Domain code throws
 * `AppError(code)`; the REST facade and the console both translate through this table.
 */
export const ERROR_TABLE = {
  INVALID_REQUEST: { status: 400, trpc: 'BAD_REQUEST', detail: 'The request could not be read.' },
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    trpc: 'BAD_REQUEST',
    detail: 'The Idempotency-Key header must be 1 to 64 printable characters.',
  },
  UNAUTHORIZED: {
    status: 401,
    trpc: 'UNAUTHORIZED',
    detail: 'A valid API key is required: send "Authorization: Bearer <API_KEY>".',
  },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN', detail: 'You are not allowed to do this.' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND', detail: 'No such resource.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    trpc: 'METHOD_NOT_SUPPORTED',
    detail: 'This method is not allowed on this path.',
  },
  IDEMPOTENCY_KEY_EXPIRED: {
    status: 409,
    trpc: 'CONFLICT',
    detail: 'This idempotency key was first used more than 24 hours ago; use a new key.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    trpc: 'CONFLICT',
    detail: 'A request with this idempotency key is still being processed; retry shortly.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    trpc: 'PAYLOAD_TOO_LARGE',
    detail: 'The request body is too large.',
  },
  VALIDATION_ERROR: { status: 422, trpc: 'UNPROCESSABLE_CONTENT', detail: 'Invalid input.' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: 'This idempotency key was already used with a different request.',
  },
  TRIAL_EXPIRED: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: "The team's trial period has ended.",
  },
  INSUFFICIENT_ALLOWANCE: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: 'The monthly allowance is exhausted and the top-up balance is insufficient.',
  },
  ENDPOINT_LIMIT_REACHED: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: 'A team can register at most 10 webhook endpoints.',
  },
  INVALID_URL: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: 'The webhook URL must use HTTPS on the standard port.',
  },
  INVALID_EVENTS: {
    status: 422,
    trpc: 'UNPROCESSABLE_CONTENT',
    detail: 'Invalid or missing event types.',
  },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS', detail: 'Too many requests.' },
  INTERNAL_ERROR: {
    status: 500,
    trpc: 'INTERNAL_SERVER_ERROR',
    detail: 'Something went wrong on our side. It has been logged.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    trpc: 'SERVICE_UNAVAILABLE',
    detail: 'The service is starting or stopping; retry shortly.',
  },
} as const satisfies Record<string, { status: number; trpc: TRPC_ERROR_CODE_KEY; detail: string }>;

export type AppErrorCode = keyof typeof ERROR_TABLE;

export class AppError extends TRPCError {
  readonly appCode: AppErrorCode;
  readonly detail: string;
  /** Response headers that belong to this error (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(code: AppErrorCode, detail?: string, headers: Record<string, string> = {}) {
    const entry = ERROR_TABLE[code];
    super({ code: entry.trpc, message: detail ?? entry.detail });
    this.appCode = code;
    this.detail = detail ?? entry.detail;
    this.headers = headers;
  }
}

/**
 * Thrown instead of starting a procedure whose client has disconnected: nobody would read the
 * answer. Under overload requests wait before they reach this point, and clients give up; serving
 * them anyway spends the capacity the clients still waiting need, and a creation its client then
 * retries would happen twice. The REST facade answers it with nothing and logs nothing.
 */
export class ClientGoneError extends Error {
  constructor() {
    super('the client disconnected before the request was served');
  }
}

/** A ClientGoneError, as thrown or as the cause tRPC wrapped it in. */
export function isClientGone(error: unknown): boolean {
  return (
    error instanceof ClientGoneError || (error instanceof TRPCError && error.cause instanceof ClientGoneError)
  );
}

export interface WireError {
  status: number;
  headers: Record<string, string>;
  body: { error: string; detail: string; code: string };
}

function wire(code: AppErrorCode, detail?: string, headers: Record<string, string> = {}): WireError {
  return {
    status: ERROR_TABLE[code].status,
    headers,
    body: { error: code.toLowerCase(), detail: detail ?? ERROR_TABLE[code].detail, code },
  };
}

/** "verification_methods.email: Expected boolean" — one line per problem, paths as the client sent them. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return `${where}${issue.message}`;
    })
    .join('; ');
}

const TRPC_CODE_TO_APP: Partial<Record<TRPC_ERROR_CODE_KEY, AppErrorCode>> = {
  PARSE_ERROR: 'INVALID_REQUEST',
  BAD_REQUEST: 'INVALID_REQUEST',
  UNSUPPORTED_MEDIA_TYPE: 'INVALID_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_SUPPORTED: 'METHOD_NOT_ALLOWED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNPROCESSABLE_CONTENT: 'VALIDATION_ERROR',
  TOO_MANY_REQUESTS: 'RATE_LIMITED',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
};

/**
 * Turns whatever was thrown into the spec's `{error, detail, code}`. Input that fails its schema is
 * a 422 VALIDATION_ERROR; anything unexpected is a 500 with a generic detail (the cause is logged,
 * never sent).
 */
export function toWireError(error: unknown): WireError {
  if (error instanceof AppError) return wire(error.appCode, error.detail, error.headers);
  if (isDatabaseUnavailable(error))
    return wire('SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_DETAIL, databaseRetryAfter);
  if (error instanceof ZodError) return wire('VALIDATION_ERROR', describeZodError(error));
  if (error instanceof TRPCError) {
    if (error.cause instanceof ZodError) {
      return wire('VALIDATION_ERROR', describeZodError(error.cause));
    }
    if (error.cause instanceof AppError) return toWireError(error.cause);
    if (error.code === 'UNSUPPORTED_MEDIA_TYPE') {
      return wire('INVALID_REQUEST', 'Send the body as JSON with "Content-Type: application/json".');
    }
    if (error.code === 'PARSE_ERROR') {
      return wire('INVALID_REQUEST', 'The request body is not valid JSON.');
    }
    const appCode = TRPC_CODE_TO_APP[error.code];
    if (appCode) return wire(appCode);
  }
  return wire('INTERNAL_ERROR');
}

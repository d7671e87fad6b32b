import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ZodError } from 'zod';
import { databaseUnavailableError, isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { APP_ERRORS, type AppError, type AppErrorCode, appErrorIn } from '@/server/platform/errors';
import { describeZodError } from './validation-messages';

/**
 * The one table that knows how an application error looks on the wire: its HTTP status, and the
 * tRPC code the console's client receives. The REST facade and the console both translate
 * through it.
 */
export const ERROR_TABLE = {
  INVALID_REQUEST: { status: 400, trpc: 'BAD_REQUEST' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, trpc: 'BAD_REQUEST' },
  UNAUTHORIZED: { status: 401, trpc: 'UNAUTHORIZED' },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND' },
  METHOD_NOT_ALLOWED: { status: 405, trpc: 'METHOD_NOT_SUPPORTED' },
  REQUEST_TIMEOUT: { status: 408, trpc: 'TIMEOUT' },
  IDEMPOTENCY_KEY_EXPIRED: { status: 409, trpc: 'CONFLICT' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, trpc: 'CONFLICT' },
  CASE_NOT_OPEN: { status: 409, trpc: 'CONFLICT' },
  STEP_NOT_PENDING: { status: 409, trpc: 'CONFLICT' },
  PAYLOAD_TOO_LARGE: { status: 413, trpc: 'PAYLOAD_TOO_LARGE' },
  // Answered by the web process before any route sees the request; tRPC has no such code.
  HEADERS_TOO_LARGE: { status: 431, trpc: 'BAD_REQUEST' },
  VALIDATION_ERROR: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  TRIAL_EXPIRED: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  INSUFFICIENT_ALLOWANCE: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  ENDPOINT_LIMIT_REACHED: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  INVALID_URL: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  INVALID_EVENTS: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  PASSKEY_NOT_ENROLLED: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  TEST_MODE_ONLY: { status: 422, trpc: 'UNPROCESSABLE_CONTENT' },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS' },
  INTERNAL_ERROR: { status: 500, trpc: 'INTERNAL_SERVER_ERROR' },
  SERVICE_UNAVAILABLE: { status: 503, trpc: 'SERVICE_UNAVAILABLE' },
} as const satisfies Record<AppErrorCode, { status: number; trpc: TRPC_ERROR_CODE_KEY }>;

/** An AppError as tRPC carries it: the table's code, the AppError as the cause. */
export function toTrpcError(error: AppError): TRPCError {
  return new TRPCError({ code: ERROR_TABLE[error.appCode].trpc, message: error.detail, cause: error });
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
    body: { error: code.toLowerCase(), detail: detail ?? APP_ERRORS[code], code },
  };
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
  const appError = appErrorIn(error);
  if (appError) return wire(appError.appCode, appError.detail, appError.headers);
  if (isDatabaseUnavailable(error)) {
    const unavailable = databaseUnavailableError();
    return wire(unavailable.appCode, unavailable.detail, unavailable.headers);
  }
  if (error instanceof ZodError) return wire('VALIDATION_ERROR', describeZodError(error));
  if (error instanceof TRPCError) {
    // The input's schema refusing it (tRPC's BAD_REQUEST). An answer failing its own output schema
    // (INTERNAL_SERVER_ERROR, "Output validation failed") is the service's fault: a 500.
    if (error.cause instanceof ZodError && error.code === 'BAD_REQUEST') {
      return wire('VALIDATION_ERROR', describeZodError(error.cause));
    }
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

/**
 * The wire error of a failure the client's own input caused (a body that fails its schema, a
 * refusal such as INSUFFICIENT_ALLOWANCE), or null for any other failure: a batch answers the
 * first as that item's result, while the second fails the whole request.
 */
export function clientWireError(error: unknown): WireError | null {
  if (!(error instanceof ZodError) && !appErrorIn(error)) return null;
  const wired = toWireError(error);
  return wired.status < 500 ? wired : null;
}

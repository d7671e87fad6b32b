/**
 * The errors the service's own code raises, by code, each with the sentence a client reads when
 * the code says enough. Domain and worker code throws `AppError(code)`; only the API layer
 * (server/api/error-table.ts) knows how each looks over HTTP and tRPC.
 */
export const APP_ERRORS = {
  INVALID_REQUEST: 'The request could not be read.',
  INVALID_IDEMPOTENCY_KEY: 'The Idempotency-Key header must be 1 to 64 printable characters.',
  UNAUTHORIZED: 'A valid API key is required: send "Authorization: Bearer <API_KEY>".',
  FORBIDDEN: 'You are not allowed to do this.',
  NOT_FOUND: 'No such resource.',
  METHOD_NOT_ALLOWED: 'This method is not allowed on this path.',
  REQUEST_TIMEOUT: 'The request (headers and body) did not arrive in full within 10 seconds.',
  IDEMPOTENCY_KEY_EXPIRED: 'This idempotency key was first used more than 24 hours ago; use a new key.',
  IDEMPOTENCY_KEY_IN_USE: 'A request with this idempotency key is still being processed; retry shortly.',
  CASE_NOT_OPEN: 'The case has ended (closed, failed or expired); it can no longer change.',
  STEP_NOT_PENDING: 'This step has already been completed or failed.',
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  HEADERS_TOO_LARGE: 'The request headers are too large.',
  VALIDATION_ERROR: 'Invalid input.',
  IDEMPOTENCY_KEY_REUSED: 'This idempotency key was already used with a different request.',
  TRIAL_EXPIRED: "The team's trial period has ended.",
  INSUFFICIENT_ALLOWANCE: 'The monthly allowance is exhausted and the top-up balance is insufficient.',
  ENDPOINT_LIMIT_REACHED: 'A team can register at most 10 webhook endpoints.',
  INVALID_URL: 'The webhook URL must use HTTPS on the standard port, to a public host.',
  INVALID_EVENTS: 'Invalid or missing event types.',
  PASSKEY_NOT_ENROLLED:
    'The subject holds no passkey in this team and mode: a case with passkey needs one saved by an earlier closed case (offer_passkey). Verify them another way.',
  TEST_MODE_ONLY: 'Only a test-mode case (made with a vouch_test_ key) can be simulated.',
  RATE_LIMITED: 'Too many requests.',
  INTERNAL_ERROR: 'Something went wrong on our side. It has been logged.',
  SERVICE_UNAVAILABLE: 'The service is starting or stopping; retry shortly.',
} as const;

export type AppErrorCode = keyof typeof APP_ERRORS;

const APP_ERROR = Symbol.for('vouch.AppError');

export class AppError extends Error {
  readonly [APP_ERROR] = true;
  readonly appCode: AppErrorCode;
  readonly detail: string;
  /** Response headers that belong to this error (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(code: AppErrorCode, detail?: string, headers: Record<string, string> = {}) {
    super(detail ?? APP_ERRORS[code]);
    this.name = 'AppError';
    this.appCode = code;
    this.detail = detail ?? APP_ERRORS[code];
    this.headers = headers;
  }
}

/**
 * Whether `error` is an AppError: of this module, or of the copy of it in another bundle (Next
 * bundles each route apart from the web process's own modules, so `instanceof` can miss).
 */
export function isAppError(error: unknown): error is AppError {
  return (
    typeof error === 'object' && error !== null && (error as { [APP_ERROR]?: boolean })[APP_ERROR] === true
  );
}

/** The AppError behind `error` (itself, or its cause, as tRPC wraps what a procedure throws). */
export function appErrorIn(error: unknown): AppError | null {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    if (isAppError(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

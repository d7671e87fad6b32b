import { ERROR_TABLE } from '@/server/api/error-table';
import type { AppErrorCode } from '@/server/platform/errors';

const IDEMPOTENCY_ERRORS: readonly AppErrorCode[] = [
  'INVALID_IDEMPOTENCY_KEY',
  'IDEMPOTENCY_KEY_EXPIRED',
  'IDEMPOTENCY_KEY_IN_USE',
  'IDEMPOTENCY_KEY_REUSED',
];

/** An operation as far as its possible errors depend on it. */
export interface OperationTraits {
  method: string;
  /** The path as published, `{id}` and all. */
  path: string;
  authenticated: boolean;
  idempotent: boolean;
  /** The codes the procedure declares as its own. */
  errors: readonly AppErrorCode[];
}

/**
 * Every error code an operation can answer, and why each applies, from what every /v1 request
 * goes through (server/api/rest/serve-rest-api.ts, the procedure bases in trpc/init.ts):
 * - any request: a path that is not valid percent-encoding (400 INVALID_REQUEST), a request not in
 *   full within 10 s (408), headers over Node's 16 KB (431), input that fails its schema or
 *   carries control characters, query strings included (422 VALIDATION_ERROR), a spent budget
 *   (429), a fault on our side (500), overload or an unreachable database (503);
 * - with a body: malformed JSON or another content type (400), a body over the limit (413);
 * - with an API key: a missing, unknown or revoked key (401);
 * - naming a resource by id: an id this key's team and mode does not have (404);
 * - honouring an Idempotency-Key: a malformed key (400), a key still in use or first used over
 *   24 hours ago (409), a key reused with another body (422);
 * - then the operation's own codes.
 * 405 is not an operation's answer but a path's (a method no operation has), and is documented
 * in the API's description.
 */
export function operationErrorCodes(operation: OperationTraits): AppErrorCode[] {
  const codes = new Set<AppErrorCode>([
    'INVALID_REQUEST',
    'REQUEST_TIMEOUT',
    'HEADERS_TOO_LARGE',
    'VALIDATION_ERROR',
    'RATE_LIMITED',
    'INTERNAL_ERROR',
    'SERVICE_UNAVAILABLE',
  ]);
  if (['POST', 'PATCH', 'PUT'].includes(operation.method.toUpperCase())) codes.add('PAYLOAD_TOO_LARGE');
  if (operation.authenticated) codes.add('UNAUTHORIZED');
  if (operation.path.includes('{id}')) codes.add('NOT_FOUND');
  if (operation.idempotent) {
    for (const code of IDEMPOTENCY_ERRORS) codes.add(code);
  }
  for (const code of operation.errors) codes.add(code);
  return [...codes];
}

/** The codes grouped by the HTTP status they are answered with, statuses in ascending order. */
export function codesByStatus(codes: readonly AppErrorCode[]): Map<number, AppErrorCode[]> {
  const byStatus = new Map<number, AppErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_TABLE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b));
}

import type { OpenApiMeta } from 'trpc-to-openapi';
import type { AppErrorCode } from '@/server/platform/errors';

/**
 * What a procedure declares about itself. `openapi` publishes it under /v1 (trpc-to-openapi);
 * `successStatus` is the status its success is answered with over REST (201, 202, 204; 200 when
 * unset); `idempotent` says it honours an Idempotency-Key header (server/idempotency); `errors` lists the error codes only this operation can answer (its own rules:
 * INVALID_URL, CASE_NOT_OPEN…). The codes every operation shares (a bad key,
 * a limit, an id that is not found) are added by server/api/rest/operation-errors.ts, so the
 * OpenAPI document lists each operation's complete set.
 */
export type ProcedureMeta = OpenApiMeta<{
  successStatus?: number;
  /** The success body's media type over REST (`application/json` when unset). */
  responseType?: string;
  idempotent?: boolean;
  errors?: readonly AppErrorCode[];
}>;

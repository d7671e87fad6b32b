import type { ProcedureMeta } from '@/server/api/trpc/procedure-meta';
import { appRouter } from '@/server/api/trpc/root';
import type { AppErrorCode } from '@/server/platform/errors';

interface RouteEntry {
  method: string;
  pattern: RegExp;
  procedurePath: string;
  /** The path as the spec writes it (trailing slash kept). */
  path: string;
  successStatus?: number;
  /** Whether it needs an API key (`protect: false` in its metadata publishes it without one). */
  authenticated: boolean;
  /** Whether it honours an Idempotency-Key header. */
  idempotent: boolean;
  /** The error codes the procedure declares as its own (see ProcedureMeta). */
  errors: readonly AppErrorCode[];
}

function compile(path: string): RegExp {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  const source = trimmed
    .split('/')
    .map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  // trpc-to-openapi accepts each path with or without its trailing slash; so do we.
  return new RegExp(`^/v1/${source}/?$`);
}

type ProcedureLike = { _def: { meta?: ProcedureMeta } };

/**
 * The published routes, read from the procedures' own OpenAPI metadata (one source of truth).
 * At run time `_def.procedures` is flat, keyed by dotted path; its declared type is the nested one.
 */
export const REST_ROUTES: RouteEntry[] = Object.entries(
  appRouter._def.procedures as unknown as Record<string, ProcedureLike>,
).flatMap(([procedurePath, procedure]) => {
  const meta = procedure._def.meta;
  if (!meta?.openapi) return [];
  return [
    {
      method: meta.openapi.method,
      pattern: compile(meta.openapi.path),
      procedurePath,
      path: meta.openapi.path,
      successStatus: meta.successStatus,
      authenticated: meta.openapi.protect !== false,
      idempotent: meta.idempotent === true,
      errors: meta.errors ?? [],
    },
  ];
});

export function findRoute(pathname: string, method: string) {
  const matching = REST_ROUTES.filter((route) => route.pattern.test(pathname));
  const procedure = matching.find((route) => route.method === method);
  return {
    procedure: procedure?.procedurePath,
    successStatus: procedure?.successStatus,
    allowedMethods: [...new Set(matching.map((route) => route.method))],
  };
}

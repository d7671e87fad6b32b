import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { ProcedureMeta } from '@/server/api/trpc/procedure-meta';
import { appRouter } from '@/server/api/trpc/root';
import type { AppErrorCode } from '@/server/platform/errors';

interface RouteEntry {
  method: string;
  pattern: RegExp;
  /** The path as the spec writes it (trailing slash kept). */
  path: string;
  successStatus?: number;
  /** The success body's media type. */
  responseType: string;
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
  // trpc-to-openapi accepts each path with or without its trailing slash, in any letter case; so
  // do we.
  return new RegExp(`^/v1/${source}/?$`, 'i');
}

type OwnMeta = Omit<ProcedureMeta, 'openapi'>;

/**
 * The published routes, read from the procedures' own OpenAPI metadata (one source of truth).
 * trpc-to-openapi's generator is the public way to read it: it hands each published procedure's
 * metadata to the `filter` option, in the router's order. Answering false leaves every operation
 * out, so the generator builds no schemas for a document nobody reads.
 */
function publishedRoutes(): RouteEntry[] {
  const routes: RouteEntry[] = [];
  generateOpenApiDocument<OwnMeta>(appRouter, {
    title: 'routes',
    version: '0',
    baseUrl: '/v1',
    filter: ({ metadata }) => {
      const { openapi } = metadata;
      routes.push({
        method: openapi.method,
        pattern: compile(openapi.path),
        path: openapi.path,
        successStatus: metadata.successStatus,
        responseType: metadata.responseType ?? 'application/json',
        authenticated: openapi.protect !== false,
        idempotent: metadata.idempotent === true,
        errors: metadata.errors ?? [],
      });
      return false;
    },
  });
  return routes;
}

export const REST_ROUTES: readonly RouteEntry[] = publishedRoutes();

export function findRoute(pathname: string, method: string) {
  const matching = REST_ROUTES.filter((route) => route.pattern.test(pathname));
  const operation = matching.find((route) => route.method === method);
  return {
    operation,
    allowedMethods: [...new Set(matching.map((route) => route.method))],
  };
}

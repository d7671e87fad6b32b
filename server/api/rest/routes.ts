import type { AnyProcedure } from '@trpc/server';
import {
  coerceSchema,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  unwrapZodType,
} from 'trpc-to-openapi';
import { ZodArray, type ZodType } from 'zod';
import type { ProcedureMeta } from '@/server/api/trpc/procedure-meta';
import { appRouter } from '@/server/api/trpc/root';
import type { AppErrorCode } from '@/server/platform/errors';

/** A published operation: its procedure and what its metadata says about it on the wire. */
export interface RestOperation {
  method: string;
  /** Matches the operation's path, /v1 included, with or without its trailing slash, any case. */
  pattern: RegExp;
  /** The path as the spec writes it (trailing slash kept), relative to /v1. */
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
  /** The procedure, called directly (see serve-rest-api.ts), and its dotted path in the router. */
  procedure: AnyProcedure;
  procedurePath: string;
  type: 'query' | 'mutation';
  /** Whether it takes an input at all (a `z.void()` input is given none). */
  takesInput: boolean;
  /** The query parameters its input reads as lists: one value given is a list of one. */
  listParameters: ReadonlySet<string>;
}

/** The path's own pattern, as trpc-to-openapi compiles it: `{name}` is one segment, named. */
function compile(path: string): RegExp {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  const source = trimmed
    .split('/')
    .map((segment) =>
      segment.startsWith('{')
        ? `(?<${segment.slice(1, -1)}>[^/]+)`
        : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  // trpc-to-openapi accepts each path with or without its trailing slash, in any letter case; so
  // do we.
  return new RegExp(`^/v1/${source}/?$`, 'i');
}

/** The keys of an object input whose value is a list (or an optional list). */
function listKeysOf(schema: ZodType): Set<string> {
  const keys = new Set<string>();
  if (!instanceofZodTypeObject(schema)) return keys;
  for (const [key, shape] of Object.entries(schema.shape) as [string, ZodType][]) {
    const inner = instanceofZodTypeOptional(shape) ? shape.unwrap() : shape;
    if (inner instanceof ZodArray) keys.add(key);
  }
  return keys;
}

type OwnMeta = Omit<ProcedureMeta, 'openapi'>;

/**
 * The published operations, read from the procedures' own OpenAPI metadata (one source of truth),
 * in the router's order, with what serving each one needs worked out once, here, rather than on
 * every request as trpc-to-openapi's handler does: the input's shape, and the string-to-type
 * coercion the library applies to an object input (it sets it on the schema itself, the first
 * time the operation is called; set here, it holds from the start, whichever surface calls first).
 */
function publishedOperations(): RestOperation[] {
  const operations: RestOperation[] = [];
  forEachOpenApiProcedure(appRouter._def.procedures, ({ path: procedurePath, type, procedure, meta }) => {
    if (type === 'subscription') return;
    const { openapi, successStatus, responseType, idempotent, errors } = meta as OwnMeta &
      Required<Pick<ProcedureMeta, 'openapi'>>;
    const input = unwrapZodType(getInputOutputParsers(procedure).inputParser, true);
    if (instanceofZodTypeObject(input)) coerceSchema(input);
    operations.push({
      method: openapi.method,
      pattern: compile(openapi.path),
      path: openapi.path,
      successStatus,
      responseType: responseType ?? 'application/json',
      authenticated: openapi.protect !== false,
      idempotent: idempotent === true,
      errors: errors ?? [],
      procedure: procedure as AnyProcedure,
      procedurePath,
      type,
      takesInput: !instanceofZodTypeLikeVoid(input),
      listParameters: listKeysOf(input),
    });
  });
  return operations;
}

export const REST_ROUTES: readonly RestOperation[] = publishedOperations();

/**
 * Each method's operations in the router's order, so the first that matches wins, as in
 * trpc-to-openapi; a path without parameters is compared as a string, not run through a pattern.
 */
const byMethod = new Map<string, RestOperation[]>();
for (const route of REST_ROUTES) byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), route]);
const literalPaths = new Map(
  REST_ROUTES.filter((route) => !route.path.includes('{')).map((route) => [
    route,
    `/v1/${route.path.replace(/^\/+|\/+$/g, '')}`.toLowerCase(),
  ]),
);

/** A path as the literal paths are compared: without its trailing slash, in lower case. */
function comparable(pathname: string): string {
  return (pathname.endsWith('/') ? pathname.slice(0, -1) : pathname).toLowerCase();
}

function matches(route: RestOperation, pathname: string, lowered: string): boolean {
  const literal = literalPaths.get(route);
  return literal === undefined ? route.pattern.test(pathname) : literal === lowered;
}

export interface RouteMatch {
  operation: RestOperation | undefined;
  /** The path's parameters, as written in it (not percent-decoded, as trpc-to-openapi gives them). */
  pathInput: Record<string, string>;
}

/** The operation a request names, and its path parameters. */
export function findOperation(pathname: string, method: string): RouteMatch {
  const lowered = comparable(pathname);
  const operation = byMethod.get(method)?.find((route) => matches(route, pathname, lowered));
  const groups =
    operation && !literalPaths.has(operation) ? operation.pattern.exec(pathname)?.groups : undefined;
  return { operation, pathInput: groups ? { ...groups } : {} };
}

/** The methods some operation answers on this path (what a 405's Allow names). */
export function allowedMethods(pathname: string): string[] {
  const lowered = comparable(pathname);
  return [...new Set(REST_ROUTES.filter((route) => matches(route, pathname, lowered)).map((r) => r.method))];
}

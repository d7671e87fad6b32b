import { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { isClientGone, toWireError, type WireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { createRequestContext, type RequestContext } from '@/server/api/trpc/context';
import { appRouter } from '@/server/api/trpc/root';
import { bodyNotAnObjectMessage } from '@/server/api/validation-messages';
import { env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { errorFields, logger } from '@/server/platform/logger';
import { runtime } from '@/server/platform/runtime';
import { findRoute } from './routes';

const ENDPOINT = '/v1';

function errorResponse(error: WireError, extraHeaders: Headers): Response {
  const headers = new Headers(extraHeaders);
  for (const [name, value] of Object.entries(error.headers)) headers.set(name, value);
  headers.set('Content-Type', 'application/json');
  headers.set('Cache-Control', 'no-store');
  return new Response(JSON.stringify(error.body), { status: error.status, headers });
}

type ParsedBody = { ok: true; value: unknown } | { ok: false; cause: unknown };

/**
 * Parses a body read within the size limit. A body-less POST (rotate-secret, test) is a request
 * with an empty JSON object, and an empty body is not "malformed JSON". Malformed JSON is reported
 * only when the handler reads the body, after its own content-type check, as the library would.
 */
function parseBody(request: Request, bytes: Uint8Array): { body: ParsedBody; assumeJson: boolean } {
  const text = new TextDecoder().decode(bytes);
  const empty = text.trim() === '';
  const assumeJson = empty && !request.headers.get('content-type');
  try {
    return { body: { ok: true, value: empty ? {} : JSON.parse(text) }, assumeJson };
  } catch (cause) {
    return { body: { ok: false, cause }, assumeJson };
  }
}

/**
 * The request as trpc-to-openapi's handler sees it: the incoming `Request` (so the library reads
 * its headers and abort signal), with the path relative to /v1 and the body already parsed.
 */
function openApiRequest(incoming: Request, pathname: string, bytes: Uint8Array | null): Request {
  const parsed = new URL(incoming.url);
  parsed.pathname = pathname.slice(ENDPOINT.length) || '/';
  const url = parsed.toString();
  const { body, assumeJson } = bytes
    ? parseBody(incoming, bytes)
    : { body: { ok: true, value: undefined } as ParsedBody, assumeJson: false };
  const headers = assumeJson ? new Headers(incoming.headers) : incoming.headers;
  if (assumeJson) headers.set('content-type', 'application/json');
  return new Proxy(incoming, {
    get(target, property) {
      if (property === 'url') return url;
      if (property === 'headers') return headers;
      if (property === 'body') {
        if (!body.ok) {
          throw new TRPCError({
            code: 'PARSE_ERROR',
            message: 'Failed to parse request body',
            cause: body.cause,
          });
        }
        const notAnObject = body.value === undefined ? null : bodyNotAnObjectMessage(body.value);
        if (notAnObject) {
          throw new TRPCError({
            code: 'UNPROCESSABLE_CONTENT',
            message: notAnObject,
            cause: new AppError('VALIDATION_ERROR', notAnObject),
          });
        }
        return body.value;
      }
      return Reflect.get(target, property, target);
    },
  });
}

/** What one request carries through the library's callbacks, keyed by the request it was given. */
interface Exchange {
  ctx: RequestContext;
  thrown?: unknown;
}
const exchanges = new WeakMap<object, Exchange>();

function exchangeOf(request: unknown): Exchange {
  const exchange = exchanges.get(request as object);
  if (!exchange) throw new Error('REST request without an exchange');
  return exchange;
}

/**
 * Built once per process: the library compiles its route table when the handler is created, so a
 * handler per request (its fetch adapter's way) would redo that on every call. The node handler
 * also accepts a fetch `Request` (it reads headers and the signal through `instanceof Request`);
 * its declared types only name node's IncomingMessage, hence the casts at the call.
 */
const openApiHandler = createOpenApiNodeHttpHandler({
  router: appRouter,
  createContext: ({ req }) => exchangeOf(req).ctx,
  onError: ({ error, req }) => {
    exchangeOf(req).thrown = error;
  },
});

interface HandlerResult {
  status: number;
  body: string | undefined;
}

function runOpenApiHandler(request: Request): Promise<HandlerResult> {
  return new Promise((resolve, reject) => {
    const res = {
      statusCode: 200,
      // The library sets only Content-Type, which the facade sets itself.
      setHeader: () => {},
      end: (body?: string) => resolve({ status: res.statusCode, body }),
    };
    (openApiHandler as (req: unknown, res: unknown) => Promise<void>)(request, res).catch(reject);
  });
}

/** API requests this process is working on (admitted and not yet answered). */
let inFlight = 0;

/**
 * The REST facade: the tRPC procedures published by trpc-to-openapi, with the spec's error shape,
 * success statuses and headers laid on top (the library's own error body cannot be reshaped).
 */
export async function handleRestRequest(incoming: Request): Promise<Response> {
  // The body is read (within its limit) before the request takes a slot: a client that sends it
  // slowly holds nothing but its own connection until the web process's request time-out.
  let bytes: Uint8Array | null = null;
  if (incoming.method !== 'GET' && incoming.method !== 'HEAD') {
    try {
      bytes = await readRequestBody(incoming, API_BODY_LIMIT_BYTES);
    } catch (error) {
      if (incoming.signal.aborted) return clientGone();
      return errorResponse(toWireError(error), new Headers());
    }
  }
  // Past MAX_CONCURRENT_REQUESTS the process is behind its clients: answering 503 now keeps the
  // admitted requests fast and memory bounded, where queueing would only make every answer late.
  if (inFlight >= env().MAX_CONCURRENT_REQUESTS) {
    const overloaded = new AppError(
      'SERVICE_UNAVAILABLE',
      'The service is busier than it can answer promptly; retry shortly.',
      { 'Retry-After': '1' },
    );
    return errorResponse(toWireError(overloaded), new Headers());
  }
  inFlight += 1;
  try {
    return await answerRestRequest(incoming, bytes);
  } finally {
    inFlight -= 1;
  }
}

/**
 * What a request whose client has gone gets: nothing reads it (nginx's 499 "client closed"). It
 * is no error, so it is logged at debug level only.
 */
function clientGone(): Response {
  logger.debug('request dropped: its client had gone');
  return new Response(null, { status: 499 });
}

async function answerRestRequest(incoming: Request, bytes: Uint8Array | null): Promise<Response> {
  // A request that waited (in the event loop, behind others) while its client gave up.
  if (incoming.signal.aborted) return clientGone();
  let thrown: unknown;
  try {
    const rt = await runtime();
    const pathname = new URL(incoming.url).pathname;
    const route = findRoute(pathname, incoming.method);

    // No route answers HEAD: without this, trpc-to-openapi answers 204 even on unknown paths.
    if (incoming.method === 'HEAD' && route.allowedMethods.length === 0) {
      return errorResponse(toWireError(new AppError('NOT_FOUND')), new Headers());
    }
    if (!route.procedure && route.allowedMethods.length > 0) {
      return errorResponse(
        toWireError(
          new AppError('METHOD_NOT_ALLOWED', `Use ${route.allowedMethods.join(', ')} on this path.`),
        ),
        new Headers({ Allow: route.allowedMethods.join(', ') }),
      );
    }

    const request = openApiRequest(incoming, pathname, bytes);
    const exchange: Exchange = { ctx: createRequestContext(rt, request) };
    exchanges.set(request, exchange);
    const result = await runOpenApiHandler(request);
    const headers = exchange.ctx.responseHeaders;
    if (result.status >= 400) {
      thrown = exchange.thrown ?? new TRPCError({ code: 'NOT_FOUND' });
      if (isClientGone(thrown)) return clientGone();
      return errorResponse(toWireError(thrown), headers);
    }
    headers.set('Cache-Control', 'no-store');
    if (route.successStatus === 204 || result.status === 204) {
      return new Response(null, { status: 204, headers });
    }
    headers.set('Content-Type', 'application/json');
    return new Response(result.body, { status: route.successStatus ?? result.status, headers });
  } catch (error) {
    thrown = error;
    return errorResponse(toWireError(error), new Headers());
  } finally {
    // Only what went wrong on our side is an error; a 503 (overload, a database outage) is the
    // service saying "not now", which its own lines report once, not per request.
    const wire = thrown === undefined || isClientGone(thrown) ? null : toWireError(thrown);
    if (wire && wire.status === 500) {
      const cause = thrown instanceof TRPCError && thrown.cause ? thrown.cause : thrown;
      logger.error('request failed', {
        method: incoming.method,
        path: new URL(incoming.url).pathname,
        ...errorFields(cause),
      });
    }
  }
}

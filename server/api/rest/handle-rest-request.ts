import { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { isClientGone, toWireError, type WireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { createRequestContext, type RequestContext } from '@/server/api/trpc/context';
import { appRouter } from '@/server/api/trpc/root';
import { bodyNotAnObjectMessage } from '@/server/api/validation-messages';
import { env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
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

/** The methods whose body trpc-to-openapi reads as the operation's input (never GET's or DELETE's). */
function carriesInput(method: string): boolean {
  return method !== 'GET' && method !== 'DELETE';
}

/**
 * The body as the operation's input, checked here so that the library receives only a JSON
 * object: it would answer malformed JSON with a 500 and spread a list into an object. The checks
 * keep the order the library's own would: content type first, then the body. A body-less POST
 * (rotate-secret, test) is a request with an empty JSON object, whether or not it names a type.
 */
function operationInput(request: Request, bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes);
  const empty = text.trim() === '';
  const contentType = request.headers.get('content-type');
  if (empty && !contentType) return '{}';
  if (!contentType?.startsWith('application/json')) {
    throw new TRPCError({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Send the body as JSON with "Content-Type: application/json".',
    });
  }
  if (empty) return '{}';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new TRPCError({ code: 'PARSE_ERROR', message: 'Failed to parse request body', cause });
  }
  // Nothing deeper than a body of ours goes on to the library (whose walks recurse).
  const problem = jsonInputProblem(value);
  if (problem?.kind === 'too_deep') {
    const detail = describeJsonInputProblem(problem);
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message: detail,
      cause: new AppError('INVALID_REQUEST', detail),
    });
  }
  const notAnObject = bodyNotAnObjectMessage(value);
  if (notAnObject) {
    throw new TRPCError({
      code: 'UNPROCESSABLE_CONTENT',
      message: notAnObject,
      cause: new AppError('VALIDATION_ERROR', notAnObject),
    });
  }
  return text;
}

/**
 * The request trpc-to-openapi's handler is given: a fetch `Request`, as its own Node adapter hands
 * it one, with the path relative to /v1 and, for an operation that takes a body, the checked one.
 * Building it costs a few microseconds (about 7 µs for a GET, 26 µs for a POST whose body the
 * library parses a second time, timed on this machine) next to the request's hundreds. It carries
 * no abort signal: the procedures watch the incoming request's, through their context.
 */
function openApiRequest(incoming: Request, pathname: string, input: Uint8Array | null): Request {
  const url = new URL(incoming.url);
  url.pathname = pathname.slice(ENDPOINT.length) || '/';
  if (!input) return new Request(url, { method: incoming.method, headers: incoming.headers });
  const json = operationInput(incoming, input);
  let headers = incoming.headers;
  if (!headers.has('content-type')) {
    headers = new Headers(headers);
    headers.set('content-type', 'application/json');
  }
  return new Request(url, { method: incoming.method, headers, body: json });
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
 * Built once per process: the handler compiles its route table when it is created (about 140 µs
 * for this router, timed on this machine), which the library's fetch adapter would redo on every
 * call. It takes the fetch `Request` its own Node adapter (`createOpenApiHttpHandler`) hands it;
 * its declared types only name node's IncomingMessage, hence the cast at the call.
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
    if (!route.operation && route.allowedMethods.length > 0) {
      return errorResponse(
        toWireError(
          new AppError('METHOD_NOT_ALLOWED', `Use ${route.allowedMethods.join(', ')} on this path.`),
        ),
        new Headers({ Allow: route.allowedMethods.join(', ') }),
      );
    }

    const takesBody = route.operation !== undefined && carriesInput(incoming.method);
    const request = openApiRequest(incoming, pathname, takesBody ? (bytes ?? new Uint8Array(0)) : null);
    const exchange: Exchange = { ctx: createRequestContext(rt, incoming) };
    exchanges.set(request, exchange);
    const result = await runOpenApiHandler(request);
    const headers = exchange.ctx.responseHeaders;
    if (result.status >= 400) {
      thrown = exchange.thrown ?? new TRPCError({ code: 'NOT_FOUND' });
      if (isClientGone(thrown)) return clientGone();
      return errorResponse(toWireError(thrown), headers);
    }
    headers.set('Cache-Control', 'no-store');
    if (route.operation?.successStatus === 204 || result.status === 204) {
      return new Response(null, { status: 204, headers });
    }
    headers.set('Content-Type', route.operation?.responseType ?? 'application/json');
    return new Response(result.body, { status: route.operation?.successStatus ?? result.status, headers });
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

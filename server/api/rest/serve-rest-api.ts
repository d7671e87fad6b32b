import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError } from '@trpc/server';
import { isClientGone, toWireError, type WireError } from '@/server/api/error-table';
import { isDecodablePath } from '@/server/api/http/decodable-path';
import { API_BODY_LIMIT_BYTES, readIncomingBody } from '@/server/api/http/request-body';
import { createRequestContext } from '@/server/api/trpc/context';
import { bodyNotAnObjectMessage } from '@/server/api/validation-messages';
import { env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
import { errorFields, logger } from '@/server/platform/logger';
import { runtime } from '@/server/platform/runtime';
import { buildOpenApiDocument } from './openapi-document';
import { allowedMethods, findOperation, type RestOperation } from './routes';

/**
 * The REST API, served straight from a web process's HTTP server: each `/v1` request is matched to
 * its tRPC procedure (the one definition of the API, published by trpc-to-openapi) and the
 * procedure is called directly, its answer written with the spec's error shape, success statuses
 * and headers. Nothing per request is what could be built once: the operations, their patterns
 * and their inputs' shapes are worked out at start (routes.ts), and a request is read from node's
 * own objects, without the fetch `Request` and `Response` (and their streams) that Next.js's route
 * handlers and trpc-to-openapi's handler build and read back, which cost more CPU than the
 * answer's own work on a read. `/v1/openapi.json` is served here too, so a process serving the
 * REST API alone (WEB_ROLE=api) publishes its document.
 */
export function isRestApiPath(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/');
}

/** Where the published OpenAPI document is served (GET), its servers at this deployment's BASE_URL. */
const OPENAPI_DOCUMENT_PATH = '/v1/openapi.json';

/** The document as served: built once per process, when first asked for. */
let openApiDocument: string | undefined;

function writeOpenApiDocument(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    writeError(res, toWireError(new AppError('METHOD_NOT_ALLOWED', 'Use GET on this path.')), {
      allow: 'GET',
    });
    return;
  }
  openApiDocument ??= JSON.stringify(buildOpenApiDocument(env().BASE_URL));
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : openApiDocument);
}

const utf8 = new TextDecoder();

/** API requests this process is working on (admitted and not yet answered). */
let inFlight = 0;

export async function serveRestApi(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  if (!isDecodablePath(pathname)) {
    return writeError(
      res,
      toWireError(new AppError('INVALID_REQUEST', 'The URL path is not valid percent-encoding.')),
    );
  }
  if (pathname === OPENAPI_DOCUMENT_PATH) return writeOpenApiDocument(req, res);
  const clientGone = clientGoneSignal(res);
  // The body is read (within its limit) before the request takes a slot: a client that sends it
  // slowly holds nothing but its own connection until the web process's request time-out.
  let body: Buffer | null = null;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    try {
      body = await readIncomingBody(req, API_BODY_LIMIT_BYTES);
    } catch (error) {
      if (clientGone.aborted) return dropped(res);
      // The rest of a body refused part-way is never read, and the connection is not closed under
      // a client still sending (it would get a broken pipe before it read the 413): the web
      // process's request time-out ends it.
      return writeError(res, toWireError(error));
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
    return writeError(res, toWireError(overloaded));
  }
  inFlight += 1;
  try {
    await answer(req, res, pathname, body, clientGone);
  } finally {
    inFlight -= 1;
  }
}

/**
 * Aborts when the response closes before it was sent: the client disconnected, and nobody will
 * read the answer (procedures check it before they start their work).
 */
function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  body: Buffer | null,
  clientGone: AbortSignal,
): Promise<void> {
  // A request that waited (in the event loop, behind others) while its client gave up.
  if (clientGone.aborted) return dropped(res);
  const method = req.method ?? 'GET';
  // Headers a procedure set before it failed (its rate limit's) go out with its error too.
  let responseHeaders: Headers | undefined;
  try {
    const { operation, pathInput } = findOperation(pathname, method);
    if (!operation) {
      const allowed = allowedMethods(pathname);
      // No operation answers HEAD: a path that exists says which methods it takes, like any other.
      if (allowed.length === 0) return writeError(res, toWireError(new AppError('NOT_FOUND')));
      const detail = `Use ${allowed.join(', ')} on this path.`;
      return writeError(res, toWireError(new AppError('METHOD_NOT_ALLOWED', detail)), {
        allow: allowed.join(', '),
      });
    }
    const rt = await runtime();
    const requestHeaders = fetchHeadersOf(req);
    const ctx = createRequestContext(rt, { headers: requestHeaders, signal: clientGone });
    responseHeaders = ctx.responseHeaders;
    const values = operationInput(operation, method, req.url ?? '', requestHeaders, body, pathInput);
    const input = operation.takesInput ? values : undefined;
    const data: unknown = await operation.procedure({
      ctx,
      path: operation.procedurePath,
      type: operation.type,
      getRawInput: async () => input,
      signal: undefined,
      batchIndex: 0,
    });
    const headers = headersObject(ctx.responseHeaders);
    headers['cache-control'] = 'no-store';
    if (operation.successStatus === 204) {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    // Serialized before anything is written, so a failure here is still answered as an error.
    const answered = JSON.stringify(data);
    headers['content-type'] = operation.responseType;
    res.writeHead(operation.successStatus ?? 200, headers);
    res.end(answered);
  } catch (error) {
    if (isClientGone(error)) return dropped(res);
    const wire = toWireError(error);
    // Only what went wrong on our side is an error; a 503 (overload, a database outage) is the
    // service saying "not now", which its own lines report once, not per request.
    if (wire.status === 500) {
      const cause = error instanceof TRPCError && error.cause ? error.cause : error;
      logger.error('request failed', { method, path: pathname, ...errorFields(cause) });
    }
    writeError(res, wire, responseHeaders ? headersObject(responseHeaders) : {});
  }
}

/**
 * The operation's input, as trpc-to-openapi builds it: the JSON body (an operation that reads one)
 * or the query string, then the path's parameters over them.
 */
function operationInput(
  operation: RestOperation,
  method: string,
  url: string,
  headers: Headers,
  body: Buffer | null,
  pathInput: Record<string, string>,
): Record<string, unknown> {
  const fromBody = method !== 'GET' && method !== 'DELETE';
  const values = fromBody ? bodyInput(headers, body) : queryInput(operation, url);
  return { ...values, ...pathInput };
}

/**
 * The query's parameters: a name given once is its value, given more than once the list of them,
 * and a name the input reads as a list is one even when given once.
 */
function queryInput(operation: RestOperation, url: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const at = url.indexOf('?');
  if (at < 0) return query;
  const lists = new Map<string, string[]>();
  const end = url.indexOf('#', at);
  for (const [name, value] of new URLSearchParams(url.slice(at + 1, end < 0 ? undefined : end))) {
    const list = lists.get(name);
    if (list) list.push(value);
    else lists.set(name, [value]);
  }
  for (const [name, list] of lists) {
    query[name] = list.length === 1 && !operation.listParameters.has(name) ? list[0] : list;
  }
  return query;
}

/**
 * The body as the operation's input, checked here so that the procedure receives only a JSON
 * object. The checks keep the order trpc-to-openapi's would: content type first, then the body. A
 * body-less POST (rotate-secret, test) is a request with an empty JSON object, whether or not it
 * names a type.
 */
function bodyInput(headers: Headers, body: Buffer | null): Record<string, unknown> {
  // Decoded as fetch's text() decodes it: a byte-order mark some clients send goes.
  const text = body ? utf8.decode(body) : '';
  const empty = text.trim() === '';
  const contentType = headers.get('content-type');
  if (empty && !contentType) return {};
  if (!contentType?.startsWith('application/json')) {
    throw new TRPCError({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Send the body as JSON with "Content-Type: application/json".',
    });
  }
  if (empty) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new TRPCError({ code: 'PARSE_ERROR', message: 'Failed to parse request body', cause });
  }
  // Nothing deeper than a body of ours goes on to the procedure (whose walks recurse).
  const problem = jsonInputProblem(value);
  if (problem?.kind === 'too_deep') throw new AppError('INVALID_REQUEST', describeJsonInputProblem(problem));
  const notAnObject = bodyNotAnObjectMessage(value);
  if (notAnObject) throw new AppError('VALIDATION_ERROR', notAnObject);
  return value as Record<string, unknown>;
}

/**
 * The request's headers as the procedures read them (a fetch `Headers`: the console hands them
 * one), from node's parsed `headers`, not the raw ones: the web process has dropped a client's
 * own internal headers there and set the client's address (CLIENT_ADDRESS_HEADER).
 */
function fetchHeadersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const name in req.headers) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.append(name, value);
    else if (value) for (const each of value) headers.append(name, each);
  }
  return headers;
}

/** Headers a procedure set, as node's `writeHead` takes them (`Set-Cookie` kept apart, a list). */
function headersObject(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of headers) if (name !== 'set-cookie') out[name] = value;
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

function writeError(
  res: ServerResponse,
  error: WireError,
  extra: Record<string, string | string[]> = {},
): void {
  const headers: Record<string, string | string[]> = { ...extra };
  // Names in one case (a fetch Headers' lower case), so an error's own header replaces a
  // procedure's of the same name rather than going out beside it.
  for (const [name, value] of Object.entries(error.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers['cache-control'] = 'no-store';
  res.writeHead(error.status, headers);
  res.end(JSON.stringify(error.body));
}

/**
 * What a request whose client has gone gets: nothing reads it (nginx's 499 "client closed"). It
 * is no error, so it is logged at debug level only.
 */
function dropped(res: ServerResponse): void {
  logger.debug('request dropped: its client had gone');
  if (!res.headersSent && !res.destroyed) {
    res.writeHead(499);
    res.end();
  }
}

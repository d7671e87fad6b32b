import { TRPCError } from '@trpc/server';
import { createOpenApiFetchHandler } from 'trpc-to-openapi';
import { logger } from '../lib/logger';
import { runtime } from '../runtime';
import { createRequestContext } from '../trpc/context';
import { AppError, toWireError, type WireError } from '../trpc/errors';
import { appRouter } from '../trpc/root';
import { findRoute } from './routes';

const MAX_BODY_BYTES = 1_000_000;
const ENDPOINT = '/v1';

function errorResponse(error: WireError, extraHeaders: Headers): Response {
  const headers = new Headers(extraHeaders);
  for (const [name, value] of Object.entries(error.headers)) headers.set(name, value);
  headers.set('Content-Type', 'application/json');
  headers.set('Cache-Control', 'no-store');
  return new Response(JSON.stringify(error.body), { status: error.status, headers });
}

/**
 * A body-less POST (rotate-secret, test) is a request with an empty JSON object, and an empty
 * body is not "malformed JSON". trpc-to-openapi wants a JSON content type on every body method.
 */
async function normaliseBody(request: Request): Promise<Request> {
  if (request.method === 'GET' || request.method === 'HEAD') return request;
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE');
  const text = await request.text();
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE');
  const headers = new Headers(request.headers);
  if (text.trim() === '' && !headers.get('content-type')) headers.set('content-type', 'application/json');
  return new Request(request.url, {
    method: request.method,
    headers,
    body: text.trim() === '' ? '{}' : text,
  });
}

/**
 * The REST facade: the tRPC procedures published by trpc-to-openapi, with the spec's error shape,
 * success statuses and headers laid on top (the library's own error body cannot be reshaped).
 */
export async function handleRestRequest(incoming: Request): Promise<Response> {
  let thrown: unknown;
  const passthrough = new Headers();
  try {
    const rt = await runtime();
    const request = await normaliseBody(incoming);
    const ctx = createRequestContext(rt, request);
    const route = findRoute(new URL(request.url).pathname, request.method);

    // No route answers HEAD: without this, trpc-to-openapi answers 204 even on unknown paths.
    if (request.method === 'HEAD' && route.allowedMethods.length === 0) {
      return errorResponse(toWireError(new AppError('NOT_FOUND')), passthrough);
    }
    if (!route.procedure && route.allowedMethods.length > 0) {
      return errorResponse(
        toWireError(
          new AppError('METHOD_NOT_ALLOWED', `Use ${route.allowedMethods.join(', ')} on this path.`),
        ),
        new Headers({ Allow: route.allowedMethods.join(', ') }),
      );
    }

    const response = await createOpenApiFetchHandler({
      endpoint: ENDPOINT,
      req: request,
      router: appRouter,
      createContext: () => ctx,
      onError: ({ error }) => {
        thrown = error;
      },
      // The library cannot build a 204 itself (it always writes a body), so 204 is set below.
      responseMeta: ({ errors }) =>
        errors.length === 0 && route.successStatus && route.successStatus !== 204
          ? { status: route.successStatus }
          : {},
    });

    if (response.status >= 400) {
      const cause = thrown instanceof TRPCError && thrown.cause instanceof AppError ? thrown.cause : thrown;
      return errorResponse(toWireError(cause ?? new TRPCError({ code: 'NOT_FOUND' })), ctx.responseHeaders);
    }
    const headers = new Headers(response.headers);
    for (const [name, value] of ctx.responseHeaders) headers.set(name, value);
    headers.set('Cache-Control', 'no-store');
    if (route.successStatus === 204 || response.status === 204) {
      headers.delete('Content-Type');
      return new Response(null, { status: 204, headers });
    }
    return new Response(response.body, { status: response.status, headers });
  } catch (error) {
    thrown = error;
    return errorResponse(toWireError(error), passthrough);
  } finally {
    const wire = thrown === undefined ? null : toWireError(thrown);
    if (wire && wire.status >= 500) {
      logger.error('request failed', {
        method: incoming.method,
        path: new URL(incoming.url).pathname,
        error: thrown instanceof Error ? (thrown.cause ?? thrown).toString() : String(thrown),
        stack:
          thrown instanceof Error
            ? thrown.cause instanceof Error
              ? thrown.cause.stack
              : thrown.stack
            : undefined,
      });
    }
  }
}

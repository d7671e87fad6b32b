import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { toWireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { createRequestContext } from '@/server/api/trpc/context';
import { appRouter } from '@/server/api/trpc/root';
import { AppError, appErrorIn, isAppError } from '@/server/platform/errors';
import { errorFields, logger } from '@/server/platform/logger';
import { runtime } from '@/server/platform/runtime';

export const CONSOLE_TRPC_ENDPOINT = '/api/trpc';

/**
 * Session cookies are SameSite=Lax, and a changing call is a JSON POST a form cannot send; this
 * also refuses any POST a browser marks as coming from another site or another origin.
 */
function isCrossSite(request: Request): boolean {
  if (request.method === 'GET') return false;
  const site = request.headers.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.get('origin');
  if (!origin) return false;
  try {
    return new URL(origin).host !== request.headers.get('host');
  } catch {
    return true;
  }
}

function refuse(error: AppError): Response {
  const wire = toWireError(error);
  return new Response(
    JSON.stringify({ error: { message: wire.body.detail, code: -32003, data: { appCode: wire.body.code } } }),
    { status: wire.status, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } },
  );
}

/**
 * The most calls one batched request may carry: the console's pages batch a handful; without a
 * cap one request could make the process run hundreds of procedures (a password check each).
 */
export const MAX_BATCH_SIZE = 10;

/** The request with its body read within the size limit (counted as it arrives). */
async function withReadBody(request: Request): Promise<Request> {
  if (request.method === 'GET' || request.method === 'HEAD') return request;
  const body = await readRequestBody(request, API_BODY_LIMIT_BYTES);
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body,
    signal: request.signal,
  });
}

/** tRPC for the console: the same procedures as the REST facade, authenticated by session cookie. */
export async function handleConsoleRequest(incoming: Request): Promise<Response> {
  if (isCrossSite(incoming)) return refuse(new AppError('FORBIDDEN', 'Cross-site requests are refused.'));
  let request: Request;
  try {
    request = await withReadBody(incoming);
  } catch (error) {
    return refuse(isAppError(error) ? error : new AppError('INVALID_REQUEST'));
  }
  let rt: Awaited<ReturnType<typeof runtime>>;
  try {
    rt = await runtime();
  } catch {
    return refuse(new AppError('SERVICE_UNAVAILABLE'));
  }
  const ctx = createRequestContext(rt, request);
  return fetchRequestHandler({
    endpoint: CONSOLE_TRPC_ENDPOINT,
    req: request,
    router: appRouter,
    maxBatchSize: MAX_BATCH_SIZE,
    createContext: () => ctx,
    responseMeta: ({ errors }) => {
      ctx.responseHeaders.set('Cache-Control', 'no-store');
      // An error's own headers (Retry-After on a 429) go out with it, as on the REST API.
      for (const error of errors) {
        for (const [name, value] of Object.entries(appErrorIn(error)?.headers ?? {})) {
          ctx.responseHeaders.set(name, value);
        }
      }
      return { headers: ctx.responseHeaders };
    },
    onError: ({ error, path }) => {
      if (toWireError(error).status === 500)
        logger.error('console call failed', { path, ...errorFields(error.cause ?? error) });
    },
  });
}

import { toWireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { createRequestContext } from '@/server/api/trpc/context';
import { consoleAuth } from '@/server/auth/console-auth';
import { AppError, isAppError } from '@/server/platform/errors';
import { runtime } from '@/server/platform/runtime';

/**
 * The better-auth routes a browser may call; the rest of better-auth's HTTP surface (changing a
 * password or e-mail, revoking sessions, ...) answers 404. Those changes go through the console's
 * own procedures, where the re-authentication and session rules live.
 */
const PUBLIC_ROUTES = new Set([
  'POST /sign-in/email',
  'POST /sign-in/magic-link',
  'POST /sign-out',
  'GET /magic-link/verify',
]);

/** better-auth's error shape, so the console's sign-in page reads these like its own. */
function authError(error: AppError): Response {
  const wire = toWireError(error);
  const headers = new Headers({
    ...wire.headers,
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
  });
  const retryAfter = wire.headers['Retry-After'];
  if (retryAfter) headers.set('X-Retry-After', retryAfter);
  return new Response(JSON.stringify({ code: wire.body.code, message: wire.body.detail }), {
    status: wire.status,
    headers,
  });
}

/** The sign-in routes that name an account in their body, which the per-account limits key on. */
const ACCOUNT_ROUTES = new Set(['POST /sign-in/email', 'POST /sign-in/magic-link']);

/**
 * Whether a body is JSON by its declared type. better-auth would also read a form-encoded body,
 * but the per-account limits read the account from JSON: any other encoding would pass them by,
 * so it is refused (the console's sign-in page sends JSON).
 */
function declaresJson(request: Request): boolean {
  const type = request.headers.get('content-type') ?? '';
  return /^application\/json\s*(;|$)/i.test(type);
}

function accountOf(body: Uint8Array): string | null {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { email?: unknown };
    return typeof parsed.email === 'string' && parsed.email.trim() !== '' ? parsed.email : null;
  } catch {
    return null;
  }
}

/**
 * better-auth's routes (sign-in, sign-out, e-mail links). Its own limits count per client address
 * (the web process's header, which no client can set); on top of them each account allows 5
 * wrong passwords and 5 sign-in links per 15 minutes from one client address, and 50 of each from
 * all addresses together (RateLimiters.attemptForAccount).
 */
export async function handleAuthRequest(incoming: Request): Promise<Response> {
  const route = `${incoming.method} ${new URL(incoming.url).pathname.replace(/^\/api\/auth/, '')}`;
  if (!PUBLIC_ROUTES.has(route)) return authError(new AppError('NOT_FOUND'));
  if (ACCOUNT_ROUTES.has(route) && !declaresJson(incoming)) {
    return authError(
      new AppError('INVALID_REQUEST', 'Send the sign-in as JSON (Content-Type: application/json).'),
    );
  }
  let body: Uint8Array<ArrayBuffer> | undefined;
  if (incoming.method === 'POST') {
    try {
      body = await readRequestBody(incoming, API_BODY_LIMIT_BYTES);
    } catch (error) {
      return authError(isAppError(error) ? error : new AppError('INVALID_REQUEST'));
    }
  }
  const rt = await runtime();
  const { rateLimiters, clientAddress } = createRequestContext(rt, incoming);
  const auth = await consoleAuth(rt.database.db, rt.env);
  const forward = async () => {
    const request = new Request(incoming.url, { method: incoming.method, headers: incoming.headers, body });
    const response = await auth.handler(request);
    response.headers.set('Cache-Control', 'no-store');
    return response;
  };
  const account = body ? accountOf(body) : null;
  if (!ACCOUNT_ROUTES.has(route) || !account) return forward();
  const who = { account, address: clientAddress };
  try {
    if (route === 'POST /sign-in/email') {
      return await rateLimiters.attemptForAccount('password', who, forward, (response) => response.ok);
    }
    // Every link asked for counts, whether or not the address has an account (nothing tells them apart).
    return await rateLimiters.attemptForAccount('sign_in_link', who, forward, () => false);
  } catch (error) {
    if (isAppError(error)) return authError(error);
    throw error;
  }
}

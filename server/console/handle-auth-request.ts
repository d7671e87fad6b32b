import { CLIENT_ADDRESS_HEADER, consoleAuth } from '../auth/console-auth';
import { env } from '../lib/env';
import { runtime } from '../runtime';
import { createRequestContext } from '../trpc/context';

/**
 * better-auth's routes (sign-in, sign-out, e-mail links). The client's address is put in a header
 * only this handler sets, so the sign-in rate limit keys on an address a client cannot forge.
 */
export async function handleAuthRequest(incoming: Request): Promise<Response> {
  const rt = await runtime();
  const { clientAddress } = createRequestContext(rt, incoming);
  const headers = new Headers(incoming.headers);
  headers.set(CLIENT_ADDRESS_HEADER, clientAddress);
  const hasBody = incoming.method !== 'GET' && incoming.method !== 'HEAD';
  const request = new Request(incoming.url, {
    method: incoming.method,
    headers,
    body: hasBody ? await incoming.arrayBuffer() : undefined,
  });
  const auth = await consoleAuth(rt.database.db, env());
  const response = await auth.handler(request);
  response.headers.set('Cache-Control', 'no-store');
  return response;
}

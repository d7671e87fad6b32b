import { channel } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher, errors } from 'undici';
import { storableBytes, storableText } from '@/server/platform/storable-text';
import {
  guardedLookup,
  literalAddress,
  REFUSED_LITERAL_MESSAGE,
  RefusedDestinationError,
  refusedAddressReason,
} from './destination-guard';

/** At most this much of a response is read; the rest is dropped with the connection. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** How much of the response body (and of an error, which may quote the receiver) the attempt log keeps. */
export const LOGGED_BODY_BYTES = 2048;
const CONNECT_TIMEOUT_MS = 5000;

export interface PostOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export interface PostResult {
  ok: boolean;
  status: number | null;
  /** The first 2 KB of the response body, storable (server/platform/storable-text.ts). */
  body: string | null;
  /** Why the attempt failed, storable and at most 2 KB: it may quote the receiver (a redirect's Location, its certificate's names). */
  error: string | null;
  durationMs: number;
}

/**
 * How many requests each connection our agents opened has carried, and the errors of requests
 * that went out on a connection an earlier request had used (see `postWebhook`'s retry). undici
 * tells which connection a request was written to only through its diagnostics channels
 * (`undici:client:sendHeaders`, `undici:request:error`, which hand over the very error the request
 * then fails with); post-webhook.test.ts's stale-connection case fails if they stop doing so.
 */
const requestsCarried = new WeakMap<Socket, number>();
const sentOnUsedConnection = new WeakSet<object>();
const failedOnUsedConnection = new WeakSet<object>();
channel('undici:client:sendHeaders').subscribe((message) => {
  const { request, socket } = message as { request: object; socket: Socket };
  const carried = requestsCarried.get(socket);
  if (carried === undefined) return; // another client's connection (Node's own fetch publishes here too)
  requestsCarried.set(socket, carried + 1);
  if (carried > 0) sentOnUsedConnection.add(request);
});
channel('undici:request:error').subscribe((message) => {
  const { request, error } = message as { request: object; error: object };
  if (sentOnUsedConnection.has(request)) failedOnUsedConnection.add(error);
});

const agents = new Map<boolean, Agent>();

/**
 * Kept-alive connections per destination (64 at most, HTTP/1.1 as before undici). Each new
 * connection resolves its host through the guard, and the socket connects to the addresses the
 * guard checked (`lookup` is handed to the socket itself: nothing resolves the name again). undici
 * gives up after 5 s without a connection, TLS handshake included.
 */
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    const connector = buildConnector({
      lookup: guardedLookup(allowPrivate),
      timeout: CONNECT_TIMEOUT_MS,
      allowH2: false,
    });
    agent = new Agent({
      connections: 64,
      allowH2: false,
      connect: (options, callback) =>
        connector(options, (...outcome) => {
          if (outcome[1]) requestsCarried.set(outcome[1], 0);
          callback(...outcome);
        }),
    });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

type Outcome = Omit<PostResult, 'durationMs'>;

/**
 * One POST of a webhook body. Never follows redirects (undici's `request` does not) and counts
 * them as failures; gives up after 5 s without a connection or `timeoutMs` in all; reads at most
 * 64 KiB. TLS is verified as usual (a test receiver is trusted through NODE_EXTRA_CA_CERTS).
 */
export async function postWebhook(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const finish = (partial: Outcome): PostResult => ({
    ...partial,
    error: partial.error === null ? null : storableText(partial.error, LOGGED_BODY_BYTES),
    durationMs: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    return finish({ ok: false, status: null, body: null, error: 'invalid URL' });
  }
  // Create and update refuse anything else; the connection must never go out in clear text.
  if (url.protocol !== 'https:')
    return finish({ ok: false, status: null, body: null, error: 'not an HTTPS URL' });
  // A literal address never goes through the lookup, so it is checked here. Create and update
  // refuse such URLs already; this catches endpoints stored before that, or while
  // WEBHOOK_ALLOW_PRIVATE_NETWORKS was on.
  const address = literalAddress(url);
  if (address !== null && !options.allowPrivateNetworks && refusedAddressReason(address) !== null) {
    return finish({ ok: false, status: null, body: null, error: REFUSED_LITERAL_MESSAGE });
  }
  const signal = AbortSignal.timeout(options.timeoutMs);
  const failure = (error: unknown, status: number | null = null): Outcome => ({
    ok: false,
    status,
    body: null,
    error: describeFailure(error, signal, options.timeoutMs),
  });

  let response: Dispatcher.ResponseData;
  try {
    response = await send(url, options, signal);
  } catch (error) {
    return finish(failure(error));
  }
  const status = response.statusCode;
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - received));
      received += chunk.length;
      // Leaving the loop destroys the body, and with it the connection: a response cut short
      // is not reused, one read to its end goes back to the keep-alive pool.
      if (received >= MAX_RESPONSE_BYTES) break;
    }
  } catch (error) {
    return finish(failure(error, status));
  }
  // Whatever the receiver sent (NUL, bytes that are not UTF-8) is stored only once made storable:
  // one unstorable body would fail the statement that records a whole batch.
  const text = storableBytes(Buffer.concat(chunks), LOGGED_BODY_BYTES);
  const ok = status >= 200 && status < 300;
  let error: string | null = null;
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    error = `redirect (${status}${location ? ` to ${location}` : ''}) not followed`;
  } else if (!ok) error = `endpoint answered ${status}`;
  return finish({ ok, status, body: text, error });
}

/**
 * The request, sent once more when a kept-alive connection the receiver closed while idle failed
 * it just as it went out: the receiver never saw it (the case Node documents for `reusedSocket`),
 * so it goes again on a new connection instead of failing the attempt.
 */
async function send(url: URL, options: PostOptions, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  const request = () =>
    agentFor(options.allowPrivateNetworks).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: options.headers,
      body: options.body,
      signal,
    });
  try {
    return await request();
  } catch (error) {
    const dropped = ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'].includes(
      (error as { code?: string }).code ?? '',
    );
    if (dropped && failedOnUsedConnection.has(error as object) && !signal.aborted) return request();
    throw error;
  }
}

/** Why an attempt failed, in words that name no address the guard resolved. */
function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`;
  if (error instanceof errors.ConnectTimeoutError) return `no connection within ${CONNECT_TIMEOUT_MS} ms`;
  if (error instanceof errors.SocketError) return 'connection closed before the response ended';
  if (error instanceof RefusedDestinationError) return error.message;
  return (error instanceof Error && error.message) || String(error);
}

import { Agent, request } from 'node:https';
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

const agents = new Map<boolean, Agent>();

/** Kept-alive connections per destination; each new connection resolves through the guard. */
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 64, lookup: guardedLookup(allowPrivate) });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/**
 * One POST of a webhook body. Never follows redirects (Node's client does not) and counts them as
 * failures; gives up after 5 s without a connection or `timeoutMs` in all; reads at most 64 KiB.
 * TLS is verified as usual (a test receiver is trusted through NODE_EXTRA_CA_CERTS).
 */
export function postWebhook(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const finish = (partial: Omit<PostResult, 'durationMs'>): PostResult => ({
    ...partial,
    error: partial.error === null ? null : storableText(partial.error, LOGGED_BODY_BYTES),
    durationMs: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    return Promise.resolve(finish({ ok: false, status: null, body: null, error: 'invalid URL' }));
  }
  // A literal address never goes through the lookup, so it is checked here. Create and update
  // refuse such URLs already; this catches endpoints stored before that, or while
  // WEBHOOK_ALLOW_PRIVATE_NETWORKS was on.
  const address = literalAddress(url);
  if (address !== null && !options.allowPrivateNetworks && refusedAddressReason(address) !== null) {
    return Promise.resolve(finish({ ok: false, status: null, body: null, error: REFUSED_LITERAL_MESSAGE }));
  }

  return new Promise((resolve) => {
    let settled = false;
    let current: ReturnType<typeof request> | undefined;
    const settle = (partial: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(totalTimer);
      resolve(finish(partial));
    };
    const totalTimer = setTimeout(() => {
      current?.destroy(new Error(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);

    const send = (mayRetryStaleSocket: boolean) => {
      const req = request(url, {
        method: 'POST',
        agent: agentFor(options.allowPrivateNetworks),
        headers: { ...options.headers, 'Content-Length': Buffer.byteLength(options.body).toString() },
      });
      current = req;
      req.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(() => {
          req.destroy(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`));
        }, CONNECT_TIMEOUT_MS);
        socket.once('connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed while idle, just as this request went out:
        // the receiver never saw the request (Node's documented case for `reusedSocket`), so it
        // goes once more on a new connection instead of failing the attempt.
        const stale = req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        if (stale && mayRetryStaleSocket && !settled) return send(false);
        const message =
          error instanceof RefusedDestinationError ? error.message : error.message || String(error);
        settle({ ok: false, status: null, body: null, error: message });
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let received = 0;
        const done = (complete: boolean) => {
          // Whatever the receiver sent (NUL, bytes that are not UTF-8) is stored only once made
          // storable: one unstorable body would fail the statement that records a whole batch.
          const text = storableBytes(Buffer.concat(chunks), LOGGED_BODY_BYTES);
          const ok = status >= 200 && status < 300;
          let error: string | null = null;
          if (status >= 300 && status < 400) {
            error = `redirect (${status}${res.headers.location ? ` to ${res.headers.location}` : ''}) not followed`;
          } else if (!ok) error = `endpoint answered ${status}`;
          settle({ ok, status, body: text, error });
          // A response cut short is not reused; one fully read goes back to the keep-alive pool.
          if (!complete) res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (received >= MAX_RESPONSE_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - received));
          received += chunk.length;
          if (received >= MAX_RESPONSE_BYTES) done(false);
        });
        res.on('end', () => done(true));
        res.on('error', (error) => settle({ ok: false, status, body: null, error: error.message }));
        // Cut off mid-body (time-out, reset) without an 'error': still a failed attempt, not a hang.
        res.on('close', () => {
          if (!res.complete && received < MAX_RESPONSE_BYTES) {
            settle({ ok: false, status, body: null, error: 'connection closed before the response ended' });
          }
        });
      });
      req.end(options.body);
    };
    send(true);
  });
}

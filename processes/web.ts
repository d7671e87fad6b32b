/**
 * A web process: Next.js (pages, the console, the REST API, the subject's pages) behind a small
 * HTTP server of our own, through Next's documented custom-server API. The server is ours so
 * that what must hold for every request holds before Next sees it:
 *
 * - time-outs set explicitly: a client that has not sent its whole request (headers and body)
 *   within 10 s gets 408 and its connection closed, and one that takes none of its answer for
 *   SEND_TIMEOUT_SECONDS has its connection closed, so slow clients cannot hold the process;
 * - at most MAX_CONNECTIONS open connections, the next answered 503 and closed;
 * - static files (Next's build output, public/, the API reference's scripts) served from memory,
 *   compressed once and cacheable, rather than read, and compressed, for every request by Next;
 * - the client's address taken from the socket (or, behind TRUSTED_PROXIES, from the right-most
 *   untrusted X-Forwarded-For hop) and handed to the routes in a header no client can set;
 * - a Request-Id on every response, and on every log line written while serving it;
 * - security headers on every response, with a fresh script nonce for each page;
 * - a declared body larger than its limit refused with 413 before anything reads it, every
 *   method the service does not speak (TRACE, CONNECT, ...) refused with 405, and a path that is
 *   not valid percent-encoding refused with 404 (Next.js would answer it with a 500);
 * - the REST API (/v1) handed straight to its facade (server/api/rest/serve-rest-api.ts), not
 *   through Next.js, whose request pipeline cost as much CPU per call as the API's own work.
 *
 * `npm run serve` runs it; `npm run dev` runs it with Next's development server (`--dev`).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { Server, type Socket } from 'node:net';
import path from 'node:path';
import onHeaders from 'on-headers';
import { toWireError } from '@/server/api/error-table';
import { clientAddressOf, compileProxyTrust } from '@/server/api/http/client-address';
import { guardConnections } from '@/server/api/http/connection-guard';
import { isDecodablePath } from '@/server/api/http/decodable-path';
import { bodyLimitFor } from '@/server/api/http/request-body';
import { routeTemplates } from '@/server/api/http/route-template';
import { newScriptNonce, securityHeaders, surfaceOf } from '@/server/api/http/security-headers';
import { finishServerSpan, startServerSpan } from '@/server/api/http/server-span';
import { staticAssets } from '@/server/api/http/static-assets';
import { oauthRefusal } from '@/server/api/oauth/oauth-answers';
import { refusedPage } from '@/server/api/page-kit/refused-page';
import { isRestApiPath, serveRestApi } from '@/server/api/rest/serve-rest-api';
import { bootRuntime } from '@/server/platform/boot-runtime';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import { AppError } from '@/server/platform/errors';
import { errorFields, logger } from '@/server/platform/logger';
import { watchBacklog } from '@/server/platform/metrics/backlog';
import {
  enableMetrics,
  recordRequest,
  watchDatabaseConnections,
} from '@/server/platform/metrics/instruments';
import { listenForMetrics } from '@/server/platform/metrics/metrics-server';
import { answerHealth, type ReadinessProbe, readinessProbe } from '@/server/platform/readiness';
import { newRequestId, runInRequestScope } from '@/server/platform/request-scope';
import { shutdown as shutdownRuntime } from '@/server/platform/runtime';
import { recordServedBaseUrl } from '@/server/platform/served-base-url';
import { startTracing, stopTracing, tracingOn } from '@/server/platform/tracing';
import { startWorkers } from '@/server/workers/start-workers';
import {
  checkedConfig,
  checkSigningKeySecret,
  launched,
  onStopSignal,
  refuseToStart,
  tellLauncher,
  usingDatabase,
} from './process-kit';

/** A request, headers and body, must be in within this; then 408. */
const REQUEST_TIMEOUT_MS = 10_000;
/** What a connection refused past MAX_CONNECTIONS is told (open ones idle out after 5 s). */
const CONNECTIONS_RETRY_AFTER_SECONDS = 5;
/** How long a stopping process lets requests in flight finish before it closes their sockets. */
const DRAIN_TIMEOUT_MS = 10_000;
/** From the end of the drain delay: connections are being closed, each after its answer in flight. */
let closingConnections = false;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Request headers only this process may set: a client's own values are dropped. */
const INTERNAL_HEADER_PREFIX = 'x-vouch-';

const dev = process.argv.includes('--dev');
const config = await checkedConfig();
const https = config.BASE_URL.startsWith('https:');
const trustProxy = compileProxyTrust(config.TRUSTED_PROXIES);

// Where next.config.mjs puts the build.
const distDir = path.resolve(process.env.NEXT_DIST_DIR || '.next');
if (!dev) {
  // The configuration the build resolved, handed to Next as its own standalone server does: the
  // server then never loads next.config.mjs, nor the build tools loading it needs (webpack's
  // hooks), which the image does not carry (scripts/runtime-files.mjs).
  const built = JSON.parse(readFileSync(path.join(distDir, 'required-server-files.json'), 'utf8')) as {
    config: Record<string, unknown>;
  };
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(built.config);
}
/**
 * The page renderer, unless this process serves the REST API alone (WEB_ROLE=api): then Next.js is
 * never loaded, and every path outside `/v1/` is a 404.
 */
const apiOnly = config.WEB_ROLE === 'api';
const app = apiOnly
  ? undefined
  : (await import('next')).default({
      dev,
      dir: process.cwd(),
      port: config.PORT,
      hostname: config.HOST ?? 'localhost',
    });
const handle = app?.getRequestHandler();
const staticAssetAt = staticAssets({ distDir, publicDir: path.resolve('public'), dev });
// Tracing first (when a collector is named): spans begin with the first request.
await startTracing('web');
/** Metrics on (METRICS_PORT not 0): every answered request is counted under its route's template. */
const metricsRegistry = config.METRICS_PORT > 0 ? enableMetrics('web') : undefined;
const routes = routeTemplates(distDir);

/**
 * An error answered by this process itself: the API's JSON shape on API paths, OAuth's on the
 * OpenID provider's, a page in the reader's language under /v (a subject or a manager meets it),
 * text elsewhere.
 */
function refusal(pathname: string, error: AppError, req?: IncomingMessage) {
  const wire = toWireError(error);
  const surface = surfaceOf(pathname);
  if (surface === 'verification') {
    const headers = new Headers();
    const acceptLanguage = req?.headers['accept-language'];
    if (typeof acceptLanguage === 'string') headers.set('accept-language', acceptLanguage);
    const page = refusedPage(
      { url: `http://localhost${req?.url ?? pathname}`, headers },
      config,
      wire.status,
    );
    return { status: page.status, headers: { ...wire.headers, ...page.headers }, body: page.body };
  }
  if (surface === 'oauth') {
    const answer = oauthRefusal(wire.status, wire.body.detail);
    return { status: wire.status, headers: { ...wire.headers, ...answer.headers }, body: answer.body };
  }
  const json = surface === 'api';
  return {
    status: wire.status,
    headers: {
      ...wire.headers,
      'Content-Type': json ? 'application/json' : 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
    },
    body: json ? JSON.stringify(wire.body) : `${wire.body.detail}\n`,
  };
}

function refuse(
  res: ServerResponse,
  pathname: string,
  error: AppError,
  headers: Record<string, string> = {},
) {
  const answer = refusal(pathname, error, res.req);
  res.writeHead(answer.status, { ...headers, ...answer.headers });
  res.end(answer.body);
}

/**
 * A path as the log may show it: segments that look like ids or tokens (16+ id characters: a
 * case's public id, an e-mail link's token) become `:id`, and the query string is dropped, since
 * links carry their secrets in both.
 */
function loggablePath(pathname: string): string {
  return pathname.replace(/\/[A-Za-z0-9_-]{16,}(?=\/|$)/g, '/:id');
}

/** Set once the database URL is known (a process still starting has none: unready, `database`). */
let readiness: ReadinessProbe | undefined;
/** Whether the runtime is booted and Next prepared: until then only the health paths are answered. */
let serving = false;

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const requestId = newRequestId();
  const started = performance.now();
  res.setHeader('Request-Id', requestId);
  // Once it stops taking connections, a connection's answer is its last (see drainAndStop).
  if (closingConnections) res.setHeader('Connection', 'close');
  // A fragment has no place in a request (clients keep it), but a hand-written one is not the path.
  const pathname = (req.url ?? '/').split(/[?#]/)[0] ?? '/';
  // `/livez` and `/readyz` first and cheaply: probes come often, and before the process serves.
  if (answerHealth(req, res, readiness)) return;
  const surface = surfaceOf(pathname);
  const nonce = surface === 'page' ? newScriptNonce() : undefined;
  const defaults = securityHeaders({ surface, nonce, https, dev });
  // Applied as the headers go out, so a route's own (the subject's pages set a stricter policy)
  // wins: Next copies a route's header only when the response does not have it yet.
  onHeaders(res, () => {
    for (const [name, value] of Object.entries(defaults)) {
      if (res.getHeader(name) === undefined) res.setHeader(name, value);
    }
  });

  for (const name of Object.keys(req.headers)) {
    if (name.startsWith(INTERNAL_HEADER_PREFIX)) delete req.headers[name];
  }
  req.headers[CLIENT_ADDRESS_HEADER] = clientAddressOf(req, trustProxy);
  // Next reads the page's nonce from the request's policy and puts it on every script it renders.
  if (nonce) req.headers['content-security-policy'] = defaults['Content-Security-Policy'];

  // With tracing on, the request's span is active for everything that serves it.
  // The method as metrics and traces name it: one this process speaks, or `_OTHER`.
  const method = METHODS.includes(req.method ?? '') ? (req.method as string) : '_OTHER';
  const traced = tracingOn() ? startServerSpan(req, method) : undefined;
  const serve = () =>
    runInRequestScope({ requestId }, () => {
      // One line per request at debug level; a client that leaves before its answer is 499, as
      // nginx writes it (the request may still be running: its own line says when it is dropped).
      const closed = () => {
        const status = res.writableFinished ? res.statusCode : 499;
        const durationMs = performance.now() - started;
        const route = metricsRegistry || traced ? routes.of(pathname) : null;
        if (metricsRegistry) recordRequest(method, route, status, durationMs / 1000);
        if (traced) finishServerSpan(traced.span, method, route, status);
        logger.debug('request', {
          request_id: requestId,
          pid: process.pid,
          method: req.method,
          path: loggablePath(pathname),
          status,
          duration_ms: Math.round(durationMs),
        });
      };
      // Bound to the request's span, so its line carries the trace's ids too.
      res.once('close', traced ? traced.bind(closed) : closed);
      if (!serving) {
        return refuse(
          res,
          pathname,
          new AppError('SERVICE_UNAVAILABLE', 'The service is starting; retry shortly.', {
            'Retry-After': '1',
          }),
        );
      }
      if (method === '_OTHER') {
        return refuse(res, pathname, new AppError('METHOD_NOT_ALLOWED'), { Allow: METHODS.join(', ') });
      }
      if (Number(req.headers['content-length'] ?? 0) > bodyLimitFor(pathname)) {
        return refuse(res, pathname, new AppError('PAYLOAD_TOO_LARGE'), { Connection: 'close' });
      }
      // A path that is not valid percent-encoding names nothing. Next.js would answer it with a
      // bare 500 once it decoded a route's segments; the REST API answers its own JSON 400.
      const rest = isRestApiPath(pathname);
      if (!rest && (!handle || !isDecodablePath(pathname))) {
        return refuse(res, pathname, new AppError('NOT_FOUND'));
      }
      const asset = rest ? undefined : staticAssetAt(pathname);
      if (asset && req.method !== 'GET' && req.method !== 'HEAD') {
        return refuse(res, pathname, new AppError('METHOD_NOT_ALLOWED'), { Allow: 'GET, HEAD' });
      }
      const served = rest
        ? serveRestApi(req, res, pathname)
        : asset
          ? asset(req, res)
          : (handle as NonNullable<typeof handle>)(req, res);
      served.catch((error: unknown) => {
        logger.error('request failed in the web process', {
          path: loggablePath(pathname),
          ...errorFields(error),
        });
        if (!res.headersSent) refuse(res, pathname, new AppError('INTERNAL_ERROR'));
        else res.destroy();
      });
    });
  if (traced) traced.run(serve);
  else serve();
}

const server = createServer(
  {
    headersTimeout: REQUEST_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 5_000,
    // How often Node looks for requests past their time-out (its default, 30 s, would let a slow
    // client hold a connection for up to 40 s).
    connectionsCheckingInterval: 1_000,
  },
  onRequest,
);

/** What Node's HTTP parser reports, as the error a client gets (Node's own codes). */
function clientErrorOf(error: NodeJS.ErrnoException): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('REQUEST_TIMEOUT');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new AppError('HEADERS_TOO_LARGE');
  return new AppError('INVALID_REQUEST', 'The request is not valid HTTP.');
}

/**
 * Answers on the socket itself, for refusals made where there is no response object: the error's
 * shape (the path decides JSON or text), a Request-Id, security headers. Written and the socket
 * destroyed at once, as Node does with its own: a small write leaves at once.
 */
function refuseOnSocket(socket: Socket, pathname: string, error: AppError, requestId: string): void {
  const answer = refusal(pathname, error);
  const headers = {
    ...securityHeaders({ surface: surfaceOf(pathname), https, dev }),
    'Request-Id': requestId,
    ...answer.headers,
    'Content-Length': String(Buffer.byteLength(answer.body)),
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${head.join('')}\r\n${answer.body}`,
  );
  socket.destroy();
}

/**
 * A request Node itself refuses (its time-outs, a malformed request line, headers over 16 KB)
 * never reaches `onRequest`, and Node's default answer is a bare status line. It gets the same
 * answer as any other refusal instead, with the request's own Request-Id when it had started. As
 * Node does, nothing is written once a response has begun.
 */
function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const pathname = (inFlight?.req?.url ?? '/').split('?')[0] ?? '/';
  const requestId = String(inFlight?.getHeader('Request-Id') ?? newRequestId());
  refuseOnSocket(socket, pathname, clientErrorOf(error), requestId);
}

server.on('clientError', onClientError);

const stopGuardingConnections = guardConnections(server, {
  maxConnections: config.MAX_CONNECTIONS,
  sendTimeoutMs: config.SEND_TIMEOUT_SECONDS * 1000,
  // Before its request is read, so the answer cannot suit its path: text, as for a page.
  refuse: (socket) =>
    refuseOnSocket(
      socket,
      '/',
      new AppError(
        'SERVICE_UNAVAILABLE',
        'The service has as many connections open as it takes; retry shortly.',
        {
          'Retry-After': String(CONNECTIONS_RETRY_AFTER_SECONDS),
        },
      ),
      newRequestId(),
    ),
});

/**
 * On SIGTERM (a container's stop): `/readyz` answers 503 `draining` at once while the process
 * keeps serving for DRAIN_DELAY_SECONDS, so load balancers stop sending it requests before it
 * stops taking them; then it stops taking connections, lets the requests in flight finish (at
 * most DRAIN_TIMEOUT_MS), and stops its background work and database (an embedded PostgreSQL this
 * process started). SIGINT (Ctrl-C) and the launcher's processes, with no balancer in front, skip
 * the delay.
 */
async function drainAndStop(why: string): Promise<void> {
  readiness?.markDraining();
  const behindBalancer = why === 'SIGTERM' && !launched && config.DRAIN_DELAY_SECONDS > 0;
  if (behindBalancer) {
    logger.info('draining: unready, still serving', { seconds: config.DRAIN_DELAY_SECONDS });
    await new Promise((resolve) => setTimeout(resolve, config.DRAIN_DELAY_SECONDS * 1000));
  }
  // Every connection's next answer says `Connection: close` and ends it. Behind a balancer, no
  // request may be cut: closing a keep-alive connection between two of its requests races the
  // client's next one (sent as the socket closes, and lost), which http.Server#close does to every
  // idle connection at once. So only the listener is closed (net.Server's close), and a connection
  // left idle ends at its keep-alive time-out (5 s, longer than clients keep one: undici 4 s).
  // Without a balancer (Ctrl-C, the launcher, DRAIN_DELAY_SECONDS=0) idle ones close at once.
  closingConnections = true;
  const closed = new Promise<void>((resolve) =>
    behindBalancer ? Server.prototype.close.call(server, () => resolve()) : server.close(() => resolve()),
  );
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS).unref());
  await Promise.race([closed, deadline]);
  stopGuardingConnections();
  server.closeAllConnections();
  await shutdownRuntime();
  await readiness?.close();
  metrics?.close();
  await stopTracing();
}

onStopSignal(drainAndStop);

/** Listens on PORT; under the launcher every web process shares it (SO_REUSEPORT). */
function listen(): Promise<void> {
  return new Promise((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      refuseToStart(`PORT: cannot listen on ${config.PORT} (${error.code ?? error.message})`),
    );
    server.listen({ port: config.PORT, host: config.HOST, reusePort: launched }, resolve);
  });
}

// Prometheus's port first: a port in use refuses the start before anything else is done.
const metrics = metricsRegistry
  ? await listenForMetrics(config.METRICS_PORT, config.HOST).catch((error: NodeJS.ErrnoException) =>
      refuseToStart(`METRICS_PORT: cannot listen on ${config.METRICS_PORT} (${error.code ?? error.message})`),
    )
  : undefined;

// A web process of its own (a container's) listens at once, answering only `/livez` and
// `/readyz` until it is ready, so its probes see it start (and wait for migrations). Under the
// launcher it listens once ready: the kernel spreads connections across every process sharing
// the port, and none must be sent to one still starting.
if (!launched) await listen();
// The runtime (database, migrations, jobs) is booted before requests are served; the routes,
// which Next bundles apart from this file, find it through its globalThis holder. Under the
// launcher the database is migrated already and the worker process runs the jobs.
const booted = await usingDatabase(
  config,
  bootRuntime({
    workers: config.RUN_WORKERS,
    migrate: !launched && config.MIGRATE_ON_START,
    onDatabaseUrl: (url) => {
      readiness = readinessProbe(url);
    },
  }),
);
await usingDatabase(config, checkSigningKeySecret(config, booted.database.db));
watchDatabaseConnections(booted.database.connectionUsage);
if (config.RUN_WORKERS) {
  await startWorkers(booted);
  if (metricsRegistry) watchBacklog(metricsRegistry, booted.database.db);
}
// The operator CLI, in another shell, takes the links it prints from this.
await recordServedBaseUrl(booted.database.db, config.BASE_URL, booted.clock());
await app?.prepare();
serving = true;
if (launched) {
  await listen();
  logger.info('web process listening', { port: config.PORT, pid: process.pid });
  tellLauncher({ type: 'ready', role: 'web', port: config.PORT });
} else logger.info('vouch is ready', { port: config.PORT, dev });

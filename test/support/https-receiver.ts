import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkWebhookDelivery } from './openapi-conformance';

export interface Certificate {
  /** PEM file to hand the app as NODE_EXTRA_CA_CERTS. */
  certPath: string;
  cert: string;
  key: string;
}

/**
 * A self-signed certificate for localhost and 127.0.0.1, made fresh for the test run. The app
 * trusts it through NODE_EXTRA_CA_CERTS; TLS verification stays on.
 */
export function makeCertificate(): Certificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'vouch-receiver-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return { certPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  /** The sender's port: which process sent it (`ss -tnp` names the owner of a connection). */
  clientPort: number;
  /** What the check against the app's `webhooks` section found (empty: it conforms). */
  problems: string[];
}

/** The problems the check found in these requests, each named by its path and event type. */
export function webhookProblems(requests: ReceivedRequest[]): string[] {
  return requests.flatMap((request) => request.problems.map((problem) => `${request.path}: ${problem}`));
}

export interface Reply {
  status?: number;
  /** Bytes for an answer that is not UTF-8. */
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Wait this long before answering (time-outs, a worker killed mid-attempt). */
  delayMs?: number;
}

export interface Receiver {
  port: number;
  url: (pathname: string) => string;
  received: ReceivedRequest[];
  /** Decides the answer per request path; default 200. */
  replies: Map<string, (request: ReceivedRequest) => Reply>;
  requestsTo: (pathname: string) => ReceivedRequest[];
  waitFor: (pathname: string, count: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  close: () => Promise<void>;
}

/**
 * The processes holding the local ends of TCP connections from these ports (`ss -Htnp`): which
 * process sent what a receiver got.
 */
export async function pidsOwningPorts(ports: Set<number>): Promise<Set<number>> {
  const pids = new Set<number>();
  if (ports.size === 0) return pids;
  const { stdout } = await promisify(execFile)('ss', ['-Htnp']);
  for (const line of stdout.split('\n')) {
    // State, Recv-Q, Send-Q, local address:port, peer address:port, users:(("node",pid=…,fd=…))
    const local = line.trim().split(/\s+/)[3] ?? '';
    if (!ports.has(Number(local.slice(local.lastIndexOf(':') + 1)))) continue;
    for (const match of line.matchAll(/pid=(\d+)/g)) pids.add(Number(match[1]));
  }
  return pids;
}

/** A real HTTPS webhook receiver on 127.0.0.1 recording every request it gets. */
export async function startReceiver(certificate: Certificate): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const replies = new Map<string, (request: ReceivedRequest) => Reply>();
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const request: ReceivedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        clientPort: req.socket.remotePort ?? 0,
        problems: [],
      };
      const reply = replies.get(request.path)?.(request) ?? {};
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'Content-Type': 'text/plain', ...(reply.headers ?? {}) });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
      // Answered at once (the check must not delay an attempt), recorded once checked: a test that
      // saw the delivery also sees the check's verdict.
      request.problems = await checkWebhookDelivery(request.headers, request.body);
      received.push(request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const requestsTo = (pathname: string) => received.filter((r) => r.path === pathname);
  return {
    port,
    url: (pathname) => `https://localhost:${port}${pathname}`,
    received,
    replies,
    requestsTo,
    waitFor: async (pathname, count, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (requestsTo(pathname).length < count) {
        if (Date.now() > deadline) {
          throw new Error(`receiver got ${requestsTo(pathname).length} of ${count} requests to ${pathname}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return requestsTo(pathname);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

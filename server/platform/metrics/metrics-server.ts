import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { metricsRegistry } from './instruments';

/**
 * Answers `GET /metrics` (Prometheus's text format) on `res` when the request is one and metrics
 * are on; whether it was answered (anything else is left to the caller).
 */
export function answerMetrics(req: IncomingMessage, res: ServerResponse): boolean {
  const registry = metricsRegistry();
  const pathname = (req.url ?? '/').split('?')[0];
  if (!registry || pathname !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  registry.metrics().then(
    (text) => {
      res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    },
    () => {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('metrics could not be collected\n');
    },
  );
  return true;
}

/**
 * A server of its own for `/metrics` (METRICS_PORT), never the public port: what the service
 * counts is for the operator's Prometheus, not for the internet.
 */
export function metricsServer(): Server {
  return createServer((req, res) => {
    if (answerMetrics(req, res)) return;
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found: this port serves /metrics\n');
  });
}

/** Listens for Prometheus on `port`; rejects (the port taken) so the process can refuse to start. */
export async function listenForMetrics(port: number, host: string | undefined): Promise<Server> {
  const server = metricsServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

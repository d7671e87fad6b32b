/**
 * The worker process: webhook deliveries, mail, case expiry, recovery and purges. `npm run worker`
 * runs one against DATABASE_URL (a container's shape); the launcher runs one beside its web
 * processes. Any number may run at once: each job goes to one of them. Its only HTTP is for its
 * operator: `/livez` and `/readyz` on HEALTH_PORT for the orchestrator's probes, and Prometheus's
 * `/metrics` on METRICS_PORT and on HEALTH_PORT too (one port to open for a worker's pod).
 */
import { createServer } from 'node:http';
import { bootRuntime } from '@/server/platform/boot-runtime';
import { logger } from '@/server/platform/logger';
import { watchBacklog } from '@/server/platform/metrics/backlog';
import { enableMetrics, watchDatabaseConnections } from '@/server/platform/metrics/instruments';
import { answerMetrics, listenForMetrics } from '@/server/platform/metrics/metrics-server';
import {
  answerHealth,
  HEALTH_HEADERS,
  type ReadinessProbe,
  readinessProbe,
} from '@/server/platform/readiness';
import { shutdown as shutdownRuntime } from '@/server/platform/runtime';
import { startTracing, stopTracing } from '@/server/platform/tracing';
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

const config = await checkedConfig();
await startTracing('worker');
let readiness: ReadinessProbe | undefined;
const metricsRegistry = config.METRICS_PORT > 0 ? enableMetrics('worker') : undefined;

const health = createServer((req, res) => {
  if (answerHealth(req, res, readiness) || answerMetrics(req, res)) return;
  res.writeHead(404, HEALTH_HEADERS);
  res.end('{"status":"not found"}');
});
await new Promise<void>((resolve) => {
  health.once('error', (error: NodeJS.ErrnoException) =>
    refuseToStart(`HEALTH_PORT: cannot listen on ${config.HEALTH_PORT} (${error.code ?? error.message})`),
  );
  health.listen({ port: config.HEALTH_PORT, host: config.HOST }, resolve);
});
// METRICS_PORT too, where Prometheus looks for every process; when it is taken (a web process on
// the same host holds it) the worker's metrics stay on HEALTH_PORT alone, as it says.
const metrics =
  metricsRegistry && config.METRICS_PORT !== config.HEALTH_PORT
    ? await listenForMetrics(config.METRICS_PORT, config.HOST).catch((error: NodeJS.ErrnoException) => {
        logger.warn('metrics are served on HEALTH_PORT only: METRICS_PORT cannot be listened on', {
          metrics_port: config.METRICS_PORT,
          health_port: config.HEALTH_PORT,
          error: error.code ?? error.message,
        });
        return undefined;
      })
    : undefined;

// Stopping: unready at once, then the jobs in hand finish (pg-boss's graceful stop), then the
// database closes, then the health server.
onStopSignal(async () => {
  readiness?.markDraining();
  await shutdownRuntime();
  await readiness?.close();
  health.close();
  metrics?.close();
  await stopTracing();
});
const booted = await usingDatabase(
  config,
  bootRuntime({
    workers: true,
    migrate: !launched && config.MIGRATE_ON_START,
    onDatabaseUrl: (url) => {
      readiness = readinessProbe(url);
    },
  }),
);
await usingDatabase(config, checkSigningKeySecret(config, booted.database.db));
await startWorkers(booted);
watchDatabaseConnections(booted.database.connectionUsage);
if (metricsRegistry) watchBacklog(metricsRegistry, booted.database.db);
logger.info('worker process running', {
  pid: process.pid,
  health_port: config.HEALTH_PORT,
  ...(metrics ? { metrics_port: config.METRICS_PORT } : {}),
});
tellLauncher({ type: 'ready', role: 'worker' });

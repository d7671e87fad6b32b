import { inspect } from 'node:util';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { PgBoss } from 'pg-boss';
import type { PoolMode } from '@/db/client';
import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { logger } from '@/server/platform/logger';
import type { Runtime } from '@/server/platform/runtime';
import { QUEUES, type QueueName, queueOptions, TICK_QUEUES } from './catalog';
import { reportOutage } from './outage-log';

/**
 * Starts the one pg-boss instance of this process on the app database (schema `pgboss`) and
 * creates every queue, so any process can queue jobs. In a process that runs the workers
 * (server/workers, started by the process entry) pg-boss also supervises and keeps schedules;
 * a web-only process just produces jobs.
 */
export async function startJobQueue(
  runtime: Pick<Runtime, 'databaseUrl' | 'onShutdown'>,
  options: {
    workers: boolean;
    /** WEBHOOK_TIMEOUT_MS: a delivery job's expiry leaves room for the attempt's time-out. */
    webhookTimeoutMs: number;
    /** Behind a transaction pooler no LISTEN holds: workers then find new jobs by polling alone. */
    poolMode?: PoolMode;
  },
): Promise<PgBoss> {
  const runWorkers = options.workers;
  const boss = new PgBoss({
    connectionString: runtime.databaseUrl,
    schema: 'pgboss',
    max: runWorkers ? 10 : 4,
    application_name: 'vouch-jobs',
    useListenNotify: runWorkers && options.poolMode !== 'transaction',
    supervise: runWorkers,
    schedule: runWorkers,
    // With tracing on, a job carries the trace context of the request that queued it (W3C's
    // traceparent only), and its span continues that trace (a batch's links to each).
    openTelemetry: { propagateContext: true, propagator: new W3CTraceContextPropagator() },
  });
  // pg-boss also emits errors that are not `Error` instances (pg's, from the worker's pool): log
  // their message, or the log would say only "[object Object]".
  boss.on('error', (error: unknown) => {
    if (isDatabaseUnavailable(error)) return reportOutage();
    const message = (error as { message?: unknown } | null)?.message;
    logger.error('job queue error', {
      error: typeof message === 'string' ? message : inspect(error, { depth: 3, breakLength: Infinity }),
    });
  });
  await boss.start();
  for (const name of Object.values(QUEUES) as QueueName[]) {
    const settings = queueOptions(name, { webhookTimeoutMs: options.webhookTimeoutMs });
    const existing = await boss.getQueue(name);
    if (!existing) await boss.createQueue(name, settings);
    else if (existing.policy !== settings.policy && TICK_QUEUES.includes(name)) {
      // A queue's policy is fixed at creation. A tick queue holds nothing worth keeping, so one
      // created with an older policy is made again with the current one.
      await boss.deleteQueue(name);
      await boss.createQueue(name, settings);
    } else {
      // The rest follows the current configuration.
      const { policy: _fixed, ...changeable } = settings;
      await boss.updateQueue(name, changeable);
    }
  }
  runtime.onShutdown(async () => {
    await boss.stop({ graceful: true, timeout: 10_000 });
  });
  return boss;
}

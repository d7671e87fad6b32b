/**
 * The worker process: webhook deliveries, mail, case expiry, recovery and purges, with no HTTP.
 * `npm run worker` runs one against DATABASE_URL (a container's shape); the launcher runs one
 * beside its web processes. Any number may run at once: each job goes to one of them.
 */

import { bootRuntime } from '@/server/platform/boot-runtime';
import { logger } from '@/server/platform/logger';
import { shutdown as shutdownRuntime } from '@/server/platform/runtime';
import { startWorkers } from '@/server/workers/start-workers';
import { checkedConfig, launched, onStopSignal, tellLauncher, usingDatabase } from './process-kit';

const config = checkedConfig();
// Stopping lets the jobs in hand finish (pg-boss's graceful stop), then closes the database.
onStopSignal(shutdownRuntime);
await startWorkers(await usingDatabase(config, bootRuntime({ workers: true, migrate: !launched })));
logger.info('worker process running', { pid: process.pid });
tellLauncher({ type: 'ready', role: 'worker' });

import { logger } from './lib/logger';
import { runtime, shutdown } from './runtime';

/** Migrates, starts background work, and stops everything cleanly on SIGTERM/SIGINT. */
export async function startServer(): Promise<void> {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info('shutting down', { signal });
      shutdown().finally(() => process.exit(0));
    });
  }
  await runtime();
  logger.info('vouch is ready');
}

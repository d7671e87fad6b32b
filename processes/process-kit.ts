/**
 * What every process of the service does alike: log through one logger (libraries' console output
 * included), validate the configuration (a bad value, or a stand-in serving live traffic in
 * production, stops it with one line saying why), and stop
 * cleanly on SIGTERM/SIGINT, or when the launcher that started it is gone.
 */
import { type Env, env } from '@/server/platform/env';
import { logger, routeConsoleThroughLogger } from '@/server/platform/logger';
import { assertStandInsAllowed } from '@/server/platform/stand-ins';

/**
 * Whether the launcher started this process (`--launched`): the database is then migrated, the
 * port is the launcher's to share, and an IPC channel ties the process to the launcher's life.
 */
export const launched = process.argv.includes('--launched');

// Every process entry imports this module: from here on, what libraries print goes through the
// logger too.
routeConsoleThroughLogger();

export function checkedConfig(): Env {
  try {
    const config = env();
    // Under the launcher, which checked and announced them once for all its processes.
    assertStandInsAllowed(config, launched ? () => {} : logger.warn);
    return config;
  } catch (error) {
    logger.error('refusing to start', { reason: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}

/**
 * Runs `stop` once on SIGTERM, SIGINT, or the launcher's disappearance (its IPC channel closes,
 * even when it was killed outright), then exits. A second signal while stopping changes nothing.
 */
export function onStopSignal(stop: (why: string) => Promise<void>): void {
  let stopping = false;
  const run = (why: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { reason: why });
    stop(why)
      .catch((error: unknown) => logger.error('shutdown failed', { error: String(error) }))
      .finally(() => process.exit(0));
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => run(signal));
  if (launched && process.send) process.on('disconnect', () => run('the launcher is gone'));
}

/** Tells the launcher (if any) something about this process, such as that it is ready. */
export function tellLauncher(message: { type: 'ready'; role: 'web' | 'worker'; port?: number }): void {
  if (launched && process.send) process.send(message);
}

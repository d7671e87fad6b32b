import type { PgBoss } from 'pg-boss';
import type { Database } from '@/db/client';
import type { Clock } from './clock';
import type { Env } from './env';
import type { JobProducer } from './jobs/producers';
import { logger } from './logger';
import type { IdentityProvider } from './providers/identity/identity-provider';
import type { SmsSender } from './providers/sms/sms-sender';

/**
 * Everything a request or a job needs that lives for the whole process, booted once by the
 * process's entry (processes/web.ts, processes/worker.ts: see boot-runtime.ts).
 *
 * Kept on `globalThis`: Next.js bundles each route apart from the entry's own modules, so a
 * module-level value would be a different, empty one in every bundle. This accessor is all a
 * route imports; the boot (embedded PostgreSQL, migrations, pg-boss) stays out of the bundles.
 */
export interface Runtime {
  /** The operator's configuration, validated once. */
  env: Env;
  /** The one source of "now": every time decision, in code and in SQL, takes its instant. */
  clock: Clock;
  database: Database;
  /** The database's URL, for clients that keep their own pool (pg-boss). */
  databaseUrl: string;
  /** A small pool for rate-limit counters (see the boot). */
  rateLimitDatabase: Database;
  /**
   * The job queue (pg-boss on the app database): every process queues jobs through it (the typed
   * producers in jobs/producers.ts); only a process that runs the workers consumes them.
   */
  jobs: PgBoss;
  /** The typed producers on `jobs`, handed to the code that queues work. */
  jobProducer: JobProducer;
  /**
   * The vendors' adapters: for live cases the ones the operator chose (or their development
   * stand-ins); test-mode cases always get the stand-ins (simulated ID checks, SMS kept in the dev
   * mailbox), so a test never reaches a vendor or a phone.
   */
  providers: { live: Providers; test: Providers };
  /** Hooks run in reverse order on shutdown (workers first, the database last). */
  onShutdown: (hook: () => Promise<void>) => void;
}

export interface Providers {
  identity: IdentityProvider;
  sms: SmsSender;
}

interface RuntimeHolder {
  promise?: Promise<Runtime>;
  shutdownHooks: Array<() => Promise<void>>;
}

const globalScope = globalThis as { __vouchRuntime?: RuntimeHolder };
globalScope.__vouchRuntime ??= { shutdownHooks: [] };
/** The process's one runtime holder (server/boot-runtime.ts fills it). */
export const runtimeHolder: RuntimeHolder = globalScope.__vouchRuntime;

/** The process's runtime, as its entry booted it. */
export function runtime(): Promise<Runtime> {
  if (!runtimeHolder.promise) {
    return Promise.reject(new Error('the runtime is not booted: run the service through processes/web.ts'));
  }
  return runtimeHolder.promise;
}

let stopping = false;

/** Stops workers and the database in order, so a SIGTERM never leaves an orphaned PostgreSQL. */
export async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const hook of runtimeHolder.shutdownHooks.reverse()) {
    try {
      await hook();
    } catch (error) {
      logger.warn('shutdown hook failed', { error: String(error) });
    }
  }
}

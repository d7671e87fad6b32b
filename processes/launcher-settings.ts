import type { Env } from '@/server/platform/env';

/** What the launcher acts on, as processes/check-config.ts validated it. */
export type LauncherSettings = Pick<
  Env,
  | 'PORT'
  | 'HOST'
  | 'BASE_URL'
  | 'DATABASE_URL'
  | 'WEB_PROCESSES'
  | 'EMBEDDED_PG_DIR'
  | 'HEALTH_PORT'
  | 'METRICS_PORT'
>;

/**
 * How many web processes `npm start` runs when WEB_PROCESSES is unset: one per core, less one
 * while the embedded PostgreSQL shares the machine's cores (at least one). On two cores with the
 * database beside them, a second web process only competes with PostgreSQL for the same cores:
 * one made more creations a second than two, at less CPU each.
 */
export function defaultWebProcesses(cores: number, embeddedDatabase: boolean): number {
  return Math.max(1, cores - (embeddedDatabase ? 1 : 0));
}

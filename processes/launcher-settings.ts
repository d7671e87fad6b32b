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

/**
 * The launcher's configuration check, in a process of its own: it validates the whole
 * configuration as every process does (one line per mistake, and what production mode refuses;
 * the stand-ins announced once for all the processes), hands the launcher the few settings it acts
 * on over IPC, and exits. So the launcher, which runs as long as the service, never loads the
 * validator (zod alone is about 19 MB of a process's memory).
 */
import { exitWhenIdle } from './exit-when-idle';
import type { LauncherSettings } from './launcher-settings';
import { checkedConfig } from './process-kit';

const config = await checkedConfig();
const settings: LauncherSettings = {
  PORT: config.PORT,
  HOST: config.HOST,
  BASE_URL: config.BASE_URL,
  DATABASE_URL: config.DATABASE_URL,
  WEB_PROCESSES: config.WEB_PROCESSES,
  EMBEDDED_PG_DIR: config.EMBEDDED_PG_DIR,
  HEALTH_PORT: config.HEALTH_PORT,
  METRICS_PORT: config.METRICS_PORT,
};
process.send?.({ type: 'config', settings }, () => exitWhenIdle(0));

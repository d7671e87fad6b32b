import { logger } from '@/server/platform/logger';

const OUTAGE_LOG_INTERVAL_MS = 30_000;
let outageLoggedAt = 0;
let outageErrors = 0;

/**
 * While the database is unreachable every worker's poll fails (each queue's worker keeps polling
 * at its interval, and resumes by itself): one line every 30 s says so, rather than one a poll.
 */
export function reportOutage(): void {
  outageErrors += 1;
  const now = Date.now();
  if (now - outageLoggedAt < OUTAGE_LOG_INTERVAL_MS) return;
  outageLoggedAt = now;
  logger.warn('jobs wait: the database cannot be reached', { failed_polls: outageErrors });
  outageErrors = 0;
}

import type { Runtime } from '@/server/runtime';

/**
 * Starts pg-boss and, when RUN_WORKERS is on, the workers. Filled in by the webhooks work; the
 * core service has no background jobs yet.
 */
export async function startBackgroundWork(_runtime: Runtime): Promise<void> {}

import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { reportOutage } from '@/server/platform/jobs/outage-log';
import { errorFields, logger } from '@/server/platform/logger';
import type { ClaimedDelivery } from '@/server/platform/outbox/delivery-state';
import {
  attemptDelivery,
  claimDeliveries,
  type DeliveryDeps,
  type Outcome,
  recordOutcomes,
} from './attempt-delivery';

export interface DispatcherOptions {
  /** Attempts under way (claimed, not yet written) at most; a dispatch waits for room beyond it. */
  maxInFlight: number;
  /** Ended attempts written together at most; a full batch is written at once. */
  writeBatch: number;
  /** How long an ended attempt waits for others to be written with it. */
  writeAfterMs: number;
}

export interface DeliveryDispatcher {
  /**
   * Claims the due deliveries among `ids` and starts their attempts; resolves once they are
   * claimed, not when they end. Waits first while the attempts under way fill `maxInFlight`.
   * Throws only if the claim cannot be made (then nothing of `ids` was claimed).
   */
  dispatch(ids: string[]): Promise<void>;
  /** Resolves once every attempt started has ended and its outcome is written (or left to its claim). */
  drain(): Promise<void>;
  /** Attempts started and not yet written. */
  readonly inFlight: number;
}

/**
 * The worker's deliveries, attempted without waiting for one another. A delivery's job only hands
 * its delivery over: the claim (with its lease) carries the attempt from there, so the job
 * completes once the delivery is claimed, and a worker that dies mid-attempt leaves the claim for
 * the recovery sweep, as before. Each attempt's outcome is written as it ends, with whatever else
 * ended in the same few milliseconds (`writeAfterMs`): one slow receiver holds back nobody's
 * record and nobody's next fetch, and the writes stay batched.
 */
export function startDeliveryDispatcher(deps: DeliveryDeps, options: DispatcherOptions): DeliveryDispatcher {
  let inFlight = 0;
  let ended: Outcome[] = [];
  let writeTimer: NodeJS.Timeout | null = null;
  let draining = false;
  const roomWaiters: Array<() => void> = [];
  const idleWaiters: Array<() => void> = [];

  function settled(count: number): void {
    inFlight -= count;
    for (const wake of roomWaiters.splice(0)) wake();
    if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
  }

  function logUnwritten(deliveryId: string, error: unknown): void {
    if (isDatabaseUnavailable(error)) reportOutage();
    else
      logger.error(
        'a webhook attempt’s outcome could not be written; it is sent again once its claim expires',
        {
          delivery_id: deliveryId,
          ...errorFields(error),
        },
      );
  }

  async function write(): Promise<void> {
    if (writeTimer) clearTimeout(writeTimer);
    writeTimer = null;
    const batch = ended;
    ended = [];
    if (batch.length === 0) return;
    try {
      const unwritten = await recordOutcomes(deps, batch);
      for (const [deliveryId, error] of unwritten) logUnwritten(deliveryId, error);
    } catch (error) {
      // recordOutcomes answers for each delivery; this is a fault of ours before any was written.
      for (const { delivery } of batch) logUnwritten(delivery.id, error);
    } finally {
      settled(batch.length);
    }
  }

  function onEnded(outcome: Outcome): void {
    ended.push(outcome);
    if (draining || ended.length >= options.writeBatch) void write();
    else writeTimer ??= setTimeout(() => void write(), options.writeAfterMs);
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    try {
      onEnded(await attemptDelivery(deps, delivery));
    } catch (error) {
      // An attempt ends in an outcome, whatever the receiver did; this is a fault of ours. The
      // claim stays, to expire and be recovered.
      logger.error('a webhook attempt failed before it had an outcome', {
        delivery_id: delivery.id,
        ...errorFields(error),
      });
      settled(1);
    }
  }

  return {
    get inFlight() {
      return inFlight;
    },
    async dispatch(ids) {
      while (inFlight > 0 && inFlight + ids.length > options.maxInFlight) {
        await new Promise<void>((wake) => roomWaiters.push(wake));
      }
      inFlight += ids.length;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await claimDeliveries(deps, ids);
      } catch (error) {
        settled(ids.length);
        throw error;
      }
      // Places held for deliveries that were not due (already sent, held, claimed elsewhere).
      settled(ids.length - claimed.length);
      for (const delivery of claimed) void attempt(delivery);
    },
    async drain() {
      // What ends from now on is written at once, and what has ended waits no longer for company.
      draining = true;
      if (inFlight === 0) return;
      const idle = new Promise<void>((wake) => idleWaiters.push(wake));
      void write();
      await idle;
    },
  };
}

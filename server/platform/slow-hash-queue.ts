import { availableParallelism } from 'node:os';
import { FairQueue } from './fair-queue';

/**
 * Slow hashes (scrypt of custom answers) run through this one queue per process: half the cores'
 * worth at once (at least one), so hashing never takes every core nor all of libuv's threads
 * (which connections' DNS look-ups and file reads share), and teams take turns (FairQueue). A team
 * may hold 200 hashes waiting or running in a process: two full batches.
 *
 * Kept on `globalThis`, like the runtime: every bundle of the process must share one queue.
 */
const globalScope = globalThis as { __vouchSlowHashQueue?: FairQueue };

export const SLOW_HASH_SHARE = 200;

export function slowHashQueue(): FairQueue {
  globalScope.__vouchSlowHashQueue ??= new FairQueue({
    concurrency: Math.max(1, Math.floor(availableParallelism() / 2)),
    share: SLOW_HASH_SHARE,
    // scrypt's cost here (N = 16384, r = 8): about 25 ms a hash.
    taskMs: 25,
    refusal: (seconds) =>
      `Your team's custom answers already waiting to be hashed fill its share of this server; retry in ${seconds} s.`,
  });
  return globalScope.__vouchSlowHashQueue;
}

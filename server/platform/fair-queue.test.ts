import { describe, expect, it } from 'vitest';
import { isAppError } from './errors';
import { FairQueue } from './fair-queue';

function queue(concurrency = 1, share = 10) {
  return new FairQueue({
    concurrency,
    share,
    taskMs: 100,
    refusal: (seconds) => `busy; retry in ${seconds} s`,
  });
}

/** A task that finishes when told, recording when it started. */
function gate(started: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    task: async () => {
      started.push(name);
      await done;
      return name;
    },
    open: () => open(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  it('serves keys round robin: one key’s single task waits behind the busy key’s turn in progress, not all its tasks', async () => {
    const fair = queue(1, 100);
    const started: string[] = [];
    const busy = fair.admit('storm', 50);
    const gates = Array.from({ length: 50 }, (_, i) => gate(started, `storm-${i}`));
    const stormDone = gates.map((g) => busy.run(g.task));
    await tick();
    const quiet = gate(started, 'quiet');
    const quietDone = fair.admit('quiet-team', 1).run(quiet.task);
    // storm-0 runs and storm-1 had its turn queued before the quiet team came: the quiet team's
    // task is next after it, before the 48 others.
    gates[0]?.open();
    await tick();
    gates[1]?.open();
    await tick();
    await tick();
    expect(started).toEqual(['storm-0', 'storm-1', 'quiet']);
    quiet.open();
    expect(await quietDone).toBe('quiet');
    for (const g of gates) g.open();
    expect(await Promise.all(stormDone)).toHaveLength(50);
    expect(fair.held('storm')).toBe(0);
    expect(fair.held('quiet-team')).toBe(0);
  });

  it('runs at most `concurrency` tasks at once', async () => {
    const fair = queue(2, 100);
    let running = 0;
    let most = 0;
    const lane = fair.admit('a', 20);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        lane.run(async () => {
          running += 1;
          most = Math.max(most, running);
          await tick();
          running -= 1;
        }),
      ),
    );
    expect(most).toBe(2);
  });

  it('refuses a key over its share with 429 and Retry-After, admits a first request larger than the share, and frees places as tasks finish or are given back', async () => {
    const fair = queue(1, 10);
    const large = fair.admit('a', 25);
    expect(fair.held('a')).toBe(25);
    let refusal: unknown;
    try {
      fair.admit('a', 1);
    } catch (error) {
      refusal = error;
    }
    expect(isAppError(refusal) && refusal.appCode).toBe('RATE_LIMITED');
    // 25 tasks of 100 ms, one at a time: 2.5 s, rounded up.
    expect(isAppError(refusal) && refusal.headers['Retry-After']).toBe('3');
    expect(isAppError(refusal) && refusal.detail).toBe('busy; retry in 3 s');
    // Another key is not refused.
    fair.admit('b', 5).release();
    // Used places free as tasks finish, unused ones when given back.
    await large.run(async () => undefined);
    expect(fair.held('a')).toBe(24);
    large.release();
    large.release();
    expect(fair.held('a')).toBe(0);
    fair.admit('a', 10).release();
  });

  it('a task that throws frees its place and the queue goes on; a background lane is never refused', async () => {
    const fair = queue(1, 1);
    const lane = fair.lane('worker');
    await expect(
      lane.run(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(fair.held('worker')).toBe(0);
    const many = await Promise.all(Array.from({ length: 5 }, (_, i) => lane.run(async () => i)));
    expect(many).toEqual([0, 1, 2, 3, 4]);
  });
});

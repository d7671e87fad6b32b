import { AppError } from './errors';

export interface FairQueueOptions {
  /** Tasks run at once in this process. */
  concurrency: number;
  /** Tasks one key may hold admitted and unfinished; more are refused (a first request larger than it is admitted alone). */
  share: number;
  /** What one task takes, roughly: how long a refused caller is told to wait per task ahead of it. */
  taskMs: number;
  /** What a refusal says, given its Retry-After in seconds. */
  refusal: (retryAfterSeconds: number) => string;
}

/** A place in the queue for one caller's tasks, under its key. */
export interface FairLane {
  /** Runs `task` when the key's turn comes. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Gives back the places admitted but not used. Safe to call more than once. */
  release(): void;
}

/**
 * Slow work that callers may ask for in bulk, run at most `concurrency` at a time in this
 * process, taking turns between keys (teams): each key's tasks wait in a line of their own, and
 * the lines are served round robin, so a team's one task waits behind at most the tasks running
 * and one task of each team ahead of it, however many another team queued. A key holds at most `share` tasks admitted
 * and unfinished; `admit` refuses more with 429 RATE_LIMITED and the time its line needs.
 */
export class FairQueue {
  readonly #options: FairQueueOptions;
  /** Waiting tasks' starters, per key, first come first served within a key. */
  readonly #lines = new Map<string, Array<() => void>>();
  /** Keys with waiting tasks, in the order their turns come. */
  readonly #turns: string[] = [];
  /** Places admitted and not yet finished or given back, per key. */
  readonly #held = new Map<string, number>();
  #running = 0;

  constructor(options: FairQueueOptions) {
    this.#options = options;
  }

  /** Places admitted and unfinished under `key` (what the share is counted against). */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /**
   * Admits `count` tasks under `key`, or throws RATE_LIMITED with Retry-After when the key's
   * share would be exceeded.
   */
  admit(key: string, count: number): FairLane {
    const held = this.held(key);
    if (held > 0 && held + count > this.#options.share) {
      const seconds = Math.max(
        1,
        Math.ceil((held * this.#options.taskMs) / this.#options.concurrency / 1000),
      );
      throw new AppError('RATE_LIMITED', this.#options.refusal(seconds), { 'Retry-After': String(seconds) });
    }
    return this.#lane(key, count);
  }

  /**
   * A lane that is never refused, for work that waits its turn instead (a background job's, whose
   * own pace bounds what it queues). Its tasks still take turns with every other key's.
   */
  lane(key: string): FairLane {
    return this.#lane(key, 0);
  }

  #lane(key: string, admitted: number): FairLane {
    let unused = admitted;
    this.#hold(key, admitted);
    return {
      run: (task) => {
        if (unused > 0) unused -= 1;
        else this.#hold(key, 1);
        return this.#enqueue(key, task);
      },
      release: () => {
        this.#hold(key, -unused);
        unused = 0;
      },
    };
  }

  #hold(key: string, delta: number): void {
    const held = this.held(key) + delta;
    if (held > 0) this.#held.set(key, held);
    else this.#held.delete(key);
  }

  #enqueue<T>(key: string, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.#running += 1;
        // The place is freed before the caller hears back, so a caller that goes on at once
        // finds it free.
        Promise.resolve()
          .then(task)
          .then(
            (value) => {
              this.#finish(key);
              resolve(value);
            },
            (error: unknown) => {
              this.#finish(key);
              reject(error);
            },
          );
      };
      let line = this.#lines.get(key);
      if (!line) {
        line = [];
        this.#lines.set(key, line);
        this.#turns.push(key);
      }
      line.push(start);
      this.#pump();
    });
  }

  #finish(key: string): void {
    this.#running -= 1;
    this.#hold(key, -1);
    this.#pump();
  }

  #pump(): void {
    while (this.#running < this.#options.concurrency) {
      const key = this.#turns.shift();
      if (key === undefined) return;
      const line = this.#lines.get(key);
      const start = line?.shift();
      // A key with more waiting goes to the back of the round; an empty line leaves it.
      if (line && line.length > 0) this.#turns.push(key);
      else this.#lines.delete(key);
      start?.();
    }
  }
}

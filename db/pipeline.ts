/**
 * Sends statements on one connection now, in the order given, and waits for all of them. On a
 * transaction's connection postgres.js pipelines them (one round trip instead of one per statement)
 * and PostgreSQL runs them in that order, so a later statement sees what an earlier one wrote (the
 * steps after their case, the deliveries after their event). Each entry is a function so that the
 * order is the order of this list, not of whatever evaluated first: `send` is called for each in
 * turn before anything is awaited.
 */
export function pipelined<const Sends extends readonly (() => PromiseLike<unknown>)[]>(
  ...sends: Sends
): Promise<{ -readonly [K in keyof Sends]: Awaited<ReturnType<Sends[K]>> }> {
  return Promise.all(sends.map((send) => send())) as Promise<{
    -readonly [K in keyof Sends]: Awaited<ReturnType<Sends[K]>>;
  }>;
}

import pLimit from 'p-limit';

/** The part of a postgres.js query a turn holds back: the pool's handler that sends it. */
type PoolHandler = ((query: PooledQuery) => unknown) & { debug?: unknown };
type PooledQuery = Promise<unknown> & { handler: PoolHandler };

const ignore = () => {};

/**
 * A pool's statements outside transactions take turns for its connections, first come first
 * served, at most `max` under way. postgres.js does not hold a statement back while every
 * connection is busy: it sends it on a busy one, behind whatever that connection runs, so behind a
 * creation waiting for its team's lock a key's look-up waited as long (one team's creations from
 * 64 connections: p99 331 ms with 20 connections a process; docs/contributors/performance.md). A
 * statement that waits its turn here runs on the first connection that frees instead.
 *
 * Transactions take no turn: one holds its connection from BEGIN to its end, and a turn held across
 * it would wait on any statement it sends on the pool meanwhile.
 */
export function statementTurns(max: number): <Q>(query: Q) => Q {
  const limit = pLimit(max);
  return <Q>(query: Q): Q => {
    const pooled = query as unknown as PooledQuery;
    const send = pooled.handler;
    const inTurn: PoolHandler = (started) => {
      void limit(() => {
        send(started);
        // Promise's own `then`: the query's would start it again.
        return Promise.prototype.then.call(started, ignore, ignore);
      });
    };
    // postgres.js reads it to keep the caller's stack for errors.
    inTurn.debug = send.debug;
    pooled.handler = inTurn;
    return query;
  };
}

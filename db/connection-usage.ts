import net from 'node:net';

/** A pool's connections as OpenTelemetry counts them (`db.client.connection.count`). */
export interface ConnectionUsage {
  /** Open and serving a statement or a transaction. */
  used: number;
  /** Open and waiting for work. */
  idle: number;
  max: number;
}

interface SocketOptions {
  host: string[];
  port: number[];
  path: string | false;
}

/**
 * The writes a connection is handed in one turn of the event loop go to the kernel as one. A
 * transaction's pipelined statements (db/pipeline.ts) are each handed over as soon as they are
 * built, and postgres.js writes any message of 1 KiB or more at once: a case creation's six inserts
 * were six system calls, each waking the server, where one will do (Node's documented cork and
 * uncork-on-next-tick pattern).
 */
function coalescingWrites(socket: net.Socket): void {
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args as never);
  } as net.Socket['write'];
}

/** The parts of a postgres.js query this counts by (its lazily started execution and its settling). */
type CountedQuery = Promise<unknown> & { handle: () => Promise<void>; executed: boolean };

/**
 * How many of a postgres.js pool's connections are open, and how many of those are busy. postgres.js
 * keeps its pool to itself, so this watches from outside: it opens the pool's sockets itself
 * (postgres.js's documented `socket` option; connected as postgres.js would, TLS still its own) to
 * count the open ones, and counts the work on them: each transaction holds a connection from BEGIN
 * to its end, and each statement outside one holds one while it runs. Statements pipelined on one
 * connection could count more work than connections, so `used` is capped at `open`.
 */
export function connectionUsageTracker(max: number) {
  let open = 0;
  let busy = 0;
  let next = 0;

  function socket(options: SocketOptions): net.Socket {
    const index = next++ % Math.max(1, options.host.length);
    const connection = options.path
      ? net.connect(options.path)
      : net.connect(options.port[index] ?? 5432, options.host[index]);
    coalescingWrites(connection);
    open += 1;
    connection.once('close', () => {
      open -= 1;
    });
    return connection;
  }

  const settled = () => {
    busy -= 1;
  };
  /** Counted from when it starts (postgres.js starts a query when it is first awaited) until it settles. */
  function settles(query: CountedQuery): void {
    const handle = query.handle;
    query.handle = function (this: CountedQuery) {
      if (!this.executed) {
        busy += 1;
        // Promise's own `then`: the query's would start it again.
        Promise.prototype.then.call(this, settled, settled);
      }
      return handle.call(this);
    };
  }

  return {
    socket,
    /** A pool statement outside a transaction: counted while it runs. */
    countStatement<Q>(query: Q): Q {
      settles(query as unknown as CountedQuery);
      return query;
    },
    /** A transaction: counted from its BEGIN to its end. */
    async countTransaction<T>(run: () => Promise<T>): Promise<T> {
      busy += 1;
      try {
        return await run();
      } finally {
        busy -= 1;
      }
    },
    usage(): ConnectionUsage {
      const used = Math.min(open, busy);
      return { used, idle: open - used, max };
    },
  };
}

export type ConnectionUsageTracker = ReturnType<typeof connectionUsageTracker>;

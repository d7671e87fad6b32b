import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { logger } from '@/server/platform/logger';

/** How often open connections are looked at for output their clients are not taking. */
const CHECK_INTERVAL_MS = 1_000;
/** At most one warning this often while connections are being refused. */
const REFUSED_WARNING_INTERVAL_MS = 60_000;

interface Progress {
  /** Bytes of the connection's output the operating system had taken at the last look. */
  taken: number;
  /** When it last took some, or had nothing waiting. */
  since: number;
}

/**
 * Bounds what clients can make a web process hold, connection by connection. Node times out a
 * request that is slow to arrive (headersTimeout, requestTimeout), but nothing that is slow to
 * leave: a client that never reads keeps its answer's bytes in the process for as long as it
 * keeps the connection.
 *
 * - At most `maxConnections` are open at once; the next one is handed to `refuse` (which answers
 *   and closes it) before a byte of it is read. Node's own `server.maxConnections` would close it
 *   without a word.
 * - A connection with output waiting that the operating system has taken none of for
 *   `sendTimeoutMs` is closed (what nginx calls send_timeout). Output is taken as the client
 *   reads, and is seen taken write by write (large answers go out in chunks: static-assets.ts):
 *   a slow download that keeps reading keeps going however long it takes, and an answer still
 *   being worked on (nothing waiting to go out) is not timed at all. Node's socket time-out
 *   counts that time too, and Node re-arms it itself between requests (keep-alive).
 *
 * Returns a function that stops the periodic check.
 */
export function guardConnections(
  server: Server,
  options: { maxConnections: number; sendTimeoutMs: number; refuse: (socket: Socket) => void },
): () => void {
  const open = new Map<Socket, Progress>();
  let refused = 0;
  let warnedAt = 0;

  server.on('connection', (socket: Socket) => {
    if (open.size >= options.maxConnections) {
      refused += 1;
      options.refuse(socket);
      return;
    }
    open.set(socket, { taken: 0, since: Date.now() });
    socket.once('close', () => open.delete(socket));
  });

  const timer = setInterval(() => {
    const now = Date.now();
    for (const [socket, progress] of open) {
      // bytesWritten counts what was handed to the socket, writableLength what of it is still
      // waiting (the write in progress included): the difference only grows as writes complete.
      const waiting = socket.writableLength;
      const taken = socket.bytesWritten - waiting;
      if (waiting === 0 || taken !== progress.taken) {
        progress.taken = taken;
        progress.since = now;
      } else if (now - progress.since >= options.sendTimeoutMs) {
        socket.destroy();
      }
    }
    if (refused > 0 && now - warnedAt >= REFUSED_WARNING_INTERVAL_MS) {
      logger.warn('connections refused: the web process had as many open as it takes', {
        refused,
        max_connections: options.maxConnections,
      });
      refused = 0;
      warnedAt = now;
    }
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The launcher's embedded PostgreSQL, in a process of its own and a process group of its own, so
 * that a Ctrl-C in the terminal (SIGINT to the whole foreground group) does not stop the
 * database under web processes still finishing their requests: the launcher stops it last. It
 * reports `{ type: 'ready', url }` over IPC, stops the server on `{ type: 'stop' }`, and stops it
 * too if the launcher is gone (the IPC channel closes), so it never outlives the launcher.
 */
import { startEmbeddedPostgres } from '@/db/embedded';
import { env } from '@/server/platform/env';
import { logger } from '@/server/platform/logger';
import { exitWhenIdle } from './exit-when-idle';

const config = env();
const server = await startEmbeddedPostgres({
  dataDir: config.EMBEDDED_PG_DIR,
  port: config.EMBEDDED_PG_PORT,
}).catch((error: unknown) => {
  logger.error('the embedded PostgreSQL did not start', {
    reason: error instanceof Error ? error.message : String(error),
  });
  return exitWhenIdle(1);
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server
    .stop()
    .catch((error: unknown) => logger.error('embedded PostgreSQL did not stop', { error: String(error) }));
  await exitWhenIdle(0);
}
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') void stop();
});
process.on('disconnect', () => void stop());
// Its own group gets no terminal signal; one sent to it directly still stops the server cleanly.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop());
// The service's processes share this machine with the server: they talk over its Unix socket,
// with the password of its data directory.
process.send?.({ type: 'ready', url: server.url });

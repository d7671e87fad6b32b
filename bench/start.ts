/**
 * How fast a web process is ready: from its start to `/readyz` answering 200, and the CPU it
 * spent getting there, for the built process on this machine (`npm run serve`'s command) and, when
 * an image is named, for a web container of it (`buildah run`, as the image test runs one; the
 * issue's target: ready within 5 s). Each is started RUNS times against a migrated database; the
 * first start of the built process fills V8's compile cache (scripts/build-processes.mjs), so it is
 * reported apart.
 *
 * Usage: npm run bench:start [-- --image localhost/vouch:test] [--runs 5]
 * (BENCH_DATABASE_URL: a PostgreSQL to use; otherwise an embedded one is started.)
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, serveCommandArguments } from '@/test/support/app';
import { newContainer, vouchInContainer } from '@/test/support/containers';
import { benchDatabase } from './bench-database';
import { treeCpuMs } from './process-cpu';

const argument = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const RUNS = Number(argument('runs') ?? 5);
const IMAGE = argument('image');

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function readyAfter(port: number, child: ChildProcess): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    if (res?.status === 200) return performance.now() - started;
    if (performance.now() - started > 60_000) throw new Error('not ready within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (const pid of [child.pid ?? 0]) process.kill(pid, 'SIGINT');
  await exited;
}

/** One start of the built web process: milliseconds to ready, and its CPU until then. */
async function startProcess(databaseUrl: string, compileCache: string): Promise<{ ms: number; cpu: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, serveCommandArguments('web'), {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      MIGRATE_ON_START: 'false',
      RUN_WORKERS: 'false',
      LOG_LEVEL: 'error',
      NODE_COMPILE_CACHE: compileCache,
    },
    stdio: 'ignore',
  });
  const ms = await readyAfter(port, child);
  const cpu = treeCpuMs(child.pid ?? 0);
  await stop(child);
  return { ms, cpu };
}

/**
 * One start of a web container of `image` (a fresh container each time, as a new pod), reaching
 * the database over TCP (the host's network; a socket of the host is not in the container).
 */
async function startContainer(image: string, databaseUrl: string): Promise<number> {
  const container = newContainer(image);
  const port = await freePort();
  const env = { DATABASE_URL: databaseUrl, MIGRATE_ON_START: 'false', PORT: String(port), HOST: '127.0.0.1' };
  const child = spawn('buildah', vouchInContainer(container, ['web'], env), { stdio: 'ignore' });
  try {
    return await readyAfter(port, child);
  } finally {
    // buildah run does not forward signals: the container's processes are stopped directly.
    // (pkill's status 1: nothing left to stop, as when the container exited by itself.)
    spawnSync('pkill', ['-INT', '-u', '10001']);
    await new Promise((resolve) => child.once('exit', resolve));
    execFileSync('buildah', ['rm', container], { stdio: 'ignore' });
  }
}

const cleanups: Array<() => Promise<void>> = [];
try {
  const scratch = mkdtempSync(path.join(tmpdir(), 'vouch-bench-start-'));
  cleanups.push(async () => rmSync(scratch, { recursive: true, force: true }));
  // The embedded PostgreSQL where the other benchmarks keep theirs (its OS user must reach it).
  const embeddedDir = path.resolve('.bench-data', `start-${process.pid}`);
  cleanups.push(async () => rmSync(embeddedDir, { recursive: true, force: true }));
  const { databaseUrl, appDatabaseUrl } = await benchDatabase(
    'start',
    { dir: embeddedDir, port: await freePort() },
    cleanups,
  );
  const compileCache = path.join(scratch, 'compile-cache');
  const first = await startProcess(appDatabaseUrl, compileCache);
  const runs = [];
  for (let n = 0; n < RUNS; n++) runs.push(await startProcess(appDatabaseUrl, compileCache));
  console.log(
    `web process (npm run web): first start ${first.ms.toFixed(0)} ms to ready, ${first.cpu.toFixed(0)} ms CPU; ` +
      `then median of ${RUNS}: ${median(runs.map((run) => run.ms)).toFixed(0)} ms to ready, ` +
      `${median(runs.map((run) => run.cpu)).toFixed(0)} ms CPU`,
  );
  if (IMAGE) {
    const container = [];
    for (let n = 0; n < RUNS; n++) container.push(await startContainer(IMAGE, databaseUrl));
    console.log(
      `web container (${IMAGE}): median of ${RUNS}: ${median(container).toFixed(0)} ms to ready ` +
        `(each ${container.map((ms) => ms.toFixed(0)).join(', ')} ms; target 5000)`,
    );
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

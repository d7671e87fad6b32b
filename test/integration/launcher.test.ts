/**
 * Issue 13: `npm start`'s launcher runs the production shape on one machine (an embedded
 * PostgreSQL, WEB_PROCESSES web processes sharing one port, a worker), restarts a process that
 * dies, and on SIGTERM, or a Ctrl-C in the terminal, drains the requests in flight and stops
 * everything: nothing is left running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { embeddedDatabaseUrl } from '@/db/embedded';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { freePort, processAlive, serveCommandArguments } from '@/test/support/app';
import { eventually } from '@/test/support/https-receiver';

interface Launched {
  process: ChildProcess;
  port: number;
  pgPort: number;
  dataDir: string;
  lines: () => Array<Record<string, unknown>>;
  webPids: () => number[];
  workerPids: () => number[];
  cleanUp: () => void;
}

/**
 * Whether `pid` is still one of a launcher's processes: a pid that ended may be taken by another
 * test's process on a busy machine, which must be neither killed nor counted as left running.
 */
function launchedAlive(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--launched');
  } catch {
    return false;
  }
}

/**
 * Runs the launcher on free ports with an embedded PostgreSQL of its own. `ownGroup` starts it
 * as a terminal would start a job (a process group of its own), for a Ctrl-C to the whole group.
 */
async function launch(ownGroup: boolean): Promise<Launched> {
  mkdirSync('.test-data', { recursive: true });
  const dataDir = mkdtempSync(path.resolve('.test-data', 'launcher-'));
  // PostgreSQL runs as the OS user `postgres` when the tests run as root: it must reach its folder.
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const pgPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://localhost:${port}`,
    EMBEDDED_PG_DIR: path.join(dataDir, 'postgres'),
    EMBEDDED_PG_PORT: String(pgPort),
    WEB_PROCESSES: '2',
    LOG_LEVEL: 'debug',
    // The first of the ports its processes serve /metrics on (each takes the next free one).
    METRICS_PORT: String(await freePort()),
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, serveCommandArguments('launch'), {
    env,
    detached: ownGroup,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const lines = () =>
    output.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const pidsOf = (message: string) => () =>
    lines()
      .filter((l) => l.message === message)
      .map((l) => Number(l.pid));
  const launched: Launched = {
    process: child,
    port,
    pgPort,
    dataDir,
    lines,
    webPids: pidsOf('web process listening'),
    workerPids: pidsOf('worker process running'),
    cleanUp: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of [...launched.webPids(), ...launched.workerPids()])
        if (launchedAlive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`the launcher exited with ${child.exitCode}:\n${output}`);
      return lines().some((l) => l.message === 'vouch is ready');
      // A first start makes the data directory (initdb, its password) and starts three processes
      // of Next.js: over a minute on this 2-core machine when other work shares it.
    }, 120_000);
  } catch (error) {
    // A launcher that never got ready (no build, say) must not outlive the test with its processes.
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    launched.cleanUp();
    throw error;
  }
  return launched;
}

/** A GET on a connection of its own, so that the kernel may hand it to either web process. */
function getOnNewConnection(port: number, pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Stops the launched service with `stop` while a case creation is in flight (held on a row lock),
 * and checks that the creation still succeeds, that no new connection is taken meanwhile, and that
 * every process and the database are gone afterwards.
 */
async function expectDrainedStop(launched: Launched, stop: () => void): Promise<void> {
  const database = connectDatabase(
    embeddedDatabaseUrl(path.join(launched.dataDir, 'postgres'), launched.pgPort, 'vouch'),
    {
      max: 2,
    },
  );
  const { team, key } = await createTeam(
    database.db,
    { name: 'Drain', adminEmail: 'a@drain.test' },
    systemClock,
  );
  const released = Promise.withResolvers<void>();
  const locked = Promise.withResolvers<void>();
  const holding = database.sql.begin(async (tx) => {
    await tx`insert into rate_limits (key, points, expire) values (${`write:${team.id}`}, 0, now() + interval '1 minute')
             on conflict (key) do nothing`;
    await tx`select * from rate_limits where key = ${`write:${team.id}`} for update`;
    locked.resolve();
    await released.promise;
  });
  // The lock is held before the request is sent: a fast request would otherwise take the row
  // first and never wait.
  await locked.promise;
  const creation = fetch(`http://127.0.0.1:${launched.port}/v1/cases/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ subject_email: 'inflight@drain.test', verification_methods: { email: true } }),
  });
  await eventually(async () => {
    const [row] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`;
    return (row?.n ?? 0) > 0;
  });

  const pids = [...launched.webPids(), ...launched.workerPids()].filter(launchedAlive);
  const exited = new Promise<number | null>((resolve) =>
    launched.process.once('exit', (code) => resolve(code)),
  );
  stop();
  // The web processes stop taking connections at once...
  await eventually(async () => {
    try {
      await getOnNewConnection(launched.port, '/v1/ping');
      return false;
    } catch {
      return true;
    }
  }, 10_000);
  // ...and the request they already had is finished, not cut off, the database still up for it.
  released.resolve();
  await holding;
  expect((await creation).status).toBe(201);
  await database.close();

  expect(await exited).toBe(0);
  expect(pids.filter(launchedAlive)).toEqual([]);
  expect(existsSync(path.join(launched.dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  expect(launched.lines().some((l) => l.message === 'stopped')).toBe(true);
}

describe('the launcher', () => {
  let launched: Launched;

  beforeAll(async () => {
    launched = await launch(false);
  }, 150_000);

  afterAll(() => launched?.cleanUp());

  it('runs two web processes on one port and a worker, and spreads connections across them', async () => {
    expect(new Set(launched.webPids()).size).toBe(2);
    expect(launched.workerPids()).toHaveLength(1);
    for (let i = 0; i < 40; i++) expect(await getOnNewConnection(launched.port, '/v1/ping')).toBe(200);
    const served = new Set(
      launched
        .lines()
        .filter((l) => l.message === 'request' && l.path === '/v1/ping')
        .map((l) => Number(l.pid)),
    );
    expect(served).toEqual(new Set(launched.webPids()));
  });

  it('lists at start the port each process serves /metrics on, each its own, and the worker its backlog', async () => {
    const ready = launched.lines().find((l) => l.message === 'vouch is ready') as {
      metrics_ports: Record<string, number>;
      worker_health_port: number;
    };
    expect(Object.keys(ready.metrics_ports).sort()).toEqual(['web-1', 'web-2', 'worker']);
    const ports = Object.values(ready.metrics_ports);
    expect(new Set(ports).size).toBe(3);
    expect(ports).not.toContain(launched.port);
    expect(ports).not.toContain(ready.worker_health_port);
    const scrape = async (port: number) => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };
    for (const name of ['web-1', 'web-2'] as const) {
      const text = await scrape(ready.metrics_ports[name] as number);
      expect(text).toContain('service_name="vouch-web"');
      // What waits in the database is the worker's to say: a sum across processes counts it once.
      expect(text).not.toContain('vouch_jobs_queued');
    }
    const worker = await scrape(ready.metrics_ports.worker as number);
    expect(worker).toContain('service_name="vouch-worker"');
    expect(worker).toMatch(/^vouch_jobs_queued\{queue="webhook-deliver",service_name="vouch-worker"\} \d+$/m);
    // The worker serves the same on its health port: one port to open for a worker's pod.
    expect(await scrape(ready.worker_health_port)).toContain('vouch_jobs_queued{queue="webhook-deliver"');
  });

  it('runs built JavaScript: every process it starts is a dist/processes entry, none through tsx', async () => {
    const commandLine = (pid: number) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    const running = [launched.process.pid ?? 0, ...launched.webPids(), ...launched.workerPids()].map(
      commandLine,
    );
    expect(running[0]).toMatch(/dist\/processes\/launcher\.mjs/);
    for (const line of running.slice(1))
      expect(line).toMatch(/dist\/processes\/(web|worker)\.mjs --launched$/);
    for (const line of running) expect(line).not.toMatch(/tsx|\.ts\b/);
  });

  it("has its processes reach the embedded database over the server's Unix socket", async () => {
    // A request with an API key makes each web process that serves it query the database.
    for (let i = 0; i < 10; i++) expect(await getOnNewConnection(launched.port, '/v1/cases/')).toBe(401);
    const database = connectDatabase(
      embeddedDatabaseUrl(path.join(launched.dataDir, 'postgres'), launched.pgPort, 'vouch'),
      {
        max: 1,
      },
    );
    try {
      const others = await database.sql<Array<{ client_addr: string | null }>>`
        select client_addr from pg_stat_activity
        where datname = 'vouch' and backend_type = 'client backend' and pid <> pg_backend_pid()`;
      expect(others.length).toBeGreaterThan(1);
      // A Unix-socket client has no address (the server listens on no TCP port at all).
      expect(others.filter((row) => row.client_addr !== null)).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('starts a web process or the worker again when it dies, while the others keep serving', async () => {
    const [victim = 0] = launched.webPids();
    process.kill(victim, 'SIGKILL');
    // Once it is gone (a connection the kernel had already queued for it is lost with it, as with
    // any process that dies), the other web process takes every new one.
    await eventually(async () => !processAlive(victim));
    for (let i = 0; i < 10; i++) expect(await getOnNewConnection(launched.port, '/v1/ping')).toBe(200);
    await eventually(async () => launched.webPids().length === 3, 30_000);
    expect(
      launched
        .lines()
        .some((l) => l.message === 'process exited; starting it again' && /^web-/.test(String(l.process))),
    ).toBe(true);

    const [worker = 0] = launched.workerPids();
    process.kill(worker, 'SIGKILL');
    await eventually(async () => launched.workerPids().length === 2, 30_000);
  });

  it('on SIGTERM finishes the request in flight, then stops every process and the database', async () => {
    await expectDrainedStop(launched, () => launched.process.kill('SIGTERM'));
  }, 60_000);
});

describe('Ctrl-C in the terminal', () => {
  let launched: Launched;

  beforeAll(async () => {
    launched = await launch(true);
  }, 150_000);

  afterAll(() => launched?.cleanUp());

  it('(SIGINT to every process of the job) drains the same way: the database stops last', async () => {
    await expectDrainedStop(launched, () => process.kill(-(launched.process.pid ?? 0), 'SIGINT'));
  }, 60_000);
});

/**
 * `npm run bench:api`: latency and throughput of the public API on this machine, with the load
 * generator, the app as `npm start` runs it (the launcher, its web processes and worker) and
 * PostgreSQL all on the same host.
 *
 * Seeds 10,000 and 1,000,000 cases (100 teams each, in two databases), runs the built app against
 * each with the rate limits raised through its configuration, measures the two list/get reads at a
 * steady open-loop 200 requests/s, case creation, and a bare `node:http` server answering the same
 * bodies (the ceilings: the get's, and the list's at the list's rate, the load generator's own tail
 * for an answer that size), and the database doing a creation's statements with no HTTP (the write
 * ceiling), then prints one table. It reports; it does not fail on a missed target.
 *
 * Beside it, the same-run lean reference (bench/lean-reference.ts): a bare `node:http` server on
 * postgres.js alone, on the same database, writing a creation's rows in one statement and reading a
 * case in one, driven as the app's one-team creation (closed c=16) and get (closed c=32) phases
 * are, in turns with the app (compareWithLean); the report sets Vouch's app and PostgreSQL CPU per
 * request beside its, as ratios.
 *
 * Environment: BENCH_DATABASE_URL (use that server instead of an embedded one; two databases are
 * created and dropped on it), BENCH_LARGE_CASES / BENCH_SMALL_CASES (dataset sizes),
 * BENCH_SECONDS (length of each measured phase), BENCH_CPU_PROF=1 (V8 CPU profiles of the app
 * into bench/results/profiles), BENCH_ONLY=lean (the quick comparison: only the small dataset
 * (BENCH_SMALL_CASES), the app's get and one-team creation in turns with the lean reference's,
 * BENCH_SECONDS for each side and request: a couple of minutes), BENCH_LEAN_ROUNDS (the
 * comparison's rounds of turns, 4).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { defaultWebProcesses } from '@/processes/launcher-settings';
import { hashingAnswers } from '@/server/verification/methods/custom-question/answer';
import { buildIfNeeded } from './build';
import { explainReads } from './explain';
import { closedLoop, closedLoopOf, type LoadResult, openLoop, type Target } from './load';
import { CLOCK_TICK_MS, childNamed, descendants, processCpuMs, treeCpuMs, treeMemory } from './process-cpu';
import { type SeededDataset, seedDataset, TEAM_COUNT } from './seed';
import {
  batchOneTeamTarget,
  floorTarget,
  getTarget,
  listTarget,
  postOneTeamTarget,
  postTarget,
} from './workloads';

process.env.NEXT_DIST_DIR = '.next-bench';
const DIST_DIR = '.next-bench';
const RESULTS_DIR = 'bench/results';
const LARGE = Number(process.env.BENCH_LARGE_CASES ?? 1_000_000);
const SMALL = Number(process.env.BENCH_SMALL_CASES ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_MS = 3000;
const READ_RATE = 200;
const WRITE_RATE = 400;
const HOST = '127.0.0.1';
const FLOOR_SCENARIO = 'floor: POST to a route answering at once (405)';
/** BENCH_ONLY=lean: the lean reference's comparison alone, on the small dataset. */
const LEAN_ONLY = process.env.BENCH_ONLY === 'lean';
if (process.env.BENCH_ONLY !== undefined && !LEAN_ONLY) {
  throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY}: the only partial run is BENCH_ONLY=lean`);
}
/** The phases the lean reference is compared on, as the full run drives the app in them. */
const LEAN_CREATE = {
  scenario: 'POST /v1/cases/ one team',
  load: 'closed c=16',
  concurrency: 16,
  ms: 16_000,
};
const LEAN_GET = { scenario: 'GET /v1/cases/{id}/', load: 'closed c=32', concurrency: 32, ms: 8000 };
/** The app's configured budgets in the bench: raised, not disabled (every request still spends). */
const BENCH_BUDGET_PER_MINUTE = '100000000';

const cleanups: Array<() => Promise<void> | void> = [];
const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Processes: CPU time from /proc, so each phase can say where its time went.

interface CpuSnapshot {
  app: number;
  pg: number;
  generator: number;
  /** CPU time of the whole machine, all processes, in ms. */
  machine: number;
  at: number;
}

function machineBusyMs(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) * CLOCK_TICK_MS;
}

function cpuSnapshot(appPid: number | null, postmaster: number | null): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    app: appPid ? treeCpuMs(appPid) : 0,
    pg: postmaster ? descendants(postmaster).reduce((sum, pid) => sum + processCpuMs(pid), 0) : Number.NaN,
    // When the bench process is itself the thing measured (the database ceiling), it is the app.
    generator: appPid === process.pid ? 0 : (usage.user + usage.system) / 1000,
    machine: machineBusyMs(),
    at: performance.now(),
  };
}

// ---------------------------------------------------------------------------------------------
// Build and database.

interface BenchDatabase {
  adminUrl: string;
  embedded: boolean;
  /** The URL the app's processes use for a database of this server: as `npm start` does, an embedded server's Unix socket. */
  appUrl: (url: string) => string;
}

async function startDatabase(): Promise<BenchDatabase> {
  if (process.env.BENCH_DATABASE_URL) {
    return { adminUrl: process.env.BENCH_DATABASE_URL, embedded: false, appUrl: (url) => url };
  }
  const { deleteEmbeddedData, embeddedDatabaseUrl, startEmbeddedPostgres } = await import('@/db/embedded');
  const { freePort } = await import('@/test/support/app');
  const dataDir = path.resolve('.bench-data', `pg-${process.pid}-${Date.now()}`);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const port = await freePort();
  const server = await startEmbeddedPostgres({ dataDir, port, database: 'postgres', tcp: true });
  cleanups.push(async () => {
    await server.stop();
    deleteEmbeddedData(dataDir);
  });
  return {
    adminUrl: server.tcpUrl,
    embedded: true,
    appUrl: (url) => embeddedDatabaseUrl(dataDir, port, new URL(url).pathname.slice(1)),
  };
}

// ---------------------------------------------------------------------------------------------
// The app and the ceiling server.

interface App {
  pid: number;
  port: number;
  stop: () => Promise<void>;
  logs: () => string;
}

async function startBenchApp(database: BenchDatabase, databaseUrl: string, label: string): Promise<App> {
  const { startApp } = await import('@/test/support/app');
  const profileDir = path.resolve(RESULTS_DIR, 'profiles', label);
  const env: Record<string, string> = {
    // Raised, not disabled: every request still goes through the limiter's PostgreSQL upsert.
    RATE_LIMIT_READ_PER_MINUTE: BENCH_BUDGET_PER_MINUTE,
    RATE_LIMIT_WRITE_PER_MINUTE: BENCH_BUDGET_PER_MINUTE,
    LOG_LEVEL: 'warn',
    // Its backends, told apart from the lean reference's in the comparison.
    PGAPPNAME: APP_NAME,
    // The benchmark's own build: test/support/app.ts read NEXT_DIST_DIR when it was first imported,
    // before this module set it.
    NEXT_DIST_DIR: DIST_DIR,
    // As many web processes as `npm start` runs here: with the embedded database on this machine,
    // one per core less one. The launcher cannot tell, as it is handed a DATABASE_URL.
    ...(database.embedded
      ? { WEB_PROCESSES: String(defaultWebProcesses(availableParallelism(), true)) }
      : {}),
  };
  if (process.env.BENCH_CPU_PROF === '1') {
    mkdirSync(profileDir, { recursive: true });
    env.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${profileDir}`;
  }
  // `npm start` as shipped (the launcher: WEB_PROCESSES web processes, default one per core, and
  // a worker), here without its build step and against the seeded database.
  const app = await startApp({ databaseUrl, env, script: 'launch' });
  const pid = app.process.pid as number;
  appPort.pid = pid;
  appPort.port = app.port;
  const stop = async () => {
    await app.stop();
  };
  cleanups.push(stop);
  return { pid, port: app.port, stop, logs: app.logs };
}

async function startCeiling(body: string): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin?.end(body);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`ceiling server exited with ${code}`)));
    lines.on('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  return { port, pid: child.pid as number, stop };
}

/**
 * The lean reference (bench/lean-reference.ts) against `databaseUrl`, with the app's budgets: a
 * child process, as the ceiling server is, that prints the port it listens on.
 */
async function startLean(
  databaseUrl: string,
): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/lean-reference.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      LEAN_DATABASE_URL: databaseUrl,
      PGAPPNAME: LEAN_APP_NAME,
      LEAN_READ_PER_MINUTE: BENCH_BUDGET_PER_MINUTE,
      LEAN_WRITE_PER_MINUTE: BENCH_BUDGET_PER_MINUTE,
      LEAN_PAGE_BASE: 'http://localhost:3000',
    },
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`lean reference exited with ${code}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return { port, pid: child.pid as number, stop };
}

function request(port: number, target: Target): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: HOST, port, method: target.method, path: target.path, headers: target.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    if (target.body !== undefined) req.write(target.body);
    req.end();
  });
}

/**
 * Waits (up to 15 s) until the app answers /v1/ping promptly again, so that requests a phase left
 * in flight do not count against the next one.
 */
async function settle(port: number): Promise<void> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await request(port, { method: 'GET', path: '/v1/ping', headers: {} }).catch(() => null);
    if (performance.now() - started < 50) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// ---------------------------------------------------------------------------------------------
// Workloads.

interface Row {
  scenario: string;
  cases: string;
  load: string;
  result: LoadResult;
  appCpuPerReq: number;
  pgCpuPerReq: number;
  generatorCpuPerReq: number;
  /** The app's web processes alone (the request path, without the launcher and the worker); NaN for others. */
  webCpuPerReq: number;
  /** Share of the machine's CPU (all cores) used by processes that are not part of the bench. */
  othersPct: number;
}

const rows: Row[] = [];
/** The app being measured, so each phase can first let it settle. */
const appPort = { pid: 0, port: 0 };

async function measure(
  scenario: string,
  cases: string,
  load: string,
  pids: { app: number | null; postmaster: number | null; extra?: number },
  run: () => Promise<LoadResult>,
): Promise<LoadResult> {
  if (pids.app && pids.app === appPort.pid) await settle(appPort.port);
  log(`${scenario} @ ${cases} (${load})`);
  const web = pids.app && pids.app !== process.pid ? webProcesses(pids.app) : [];
  const webCpu = () => web.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const webBefore = webCpu();
  const before = cpuSnapshot(pids.app, pids.postmaster);
  const result = await run();
  const after = cpuSnapshot(pids.app, pids.postmaster);
  const webAfter = webCpu();
  // CPU over the whole phase (warm-up included) divided by the requests the server answered in it.
  const requests = Math.max(1, result.answered);
  const ours =
    after.app -
    before.app +
    (after.pg - before.pg || 0) +
    (after.generator - before.generator) +
    (pids.extra ?? 0);
  const capacity = (after.at - before.at) * cpus().length;
  rows.push({
    othersPct: Math.max(0, (100 * (after.machine - before.machine - ours)) / capacity),
    scenario,
    cases,
    load,
    result,
    appCpuPerReq: pids.app ? (after.app - before.app) / requests : Number.NaN,
    pgCpuPerReq: (after.pg - before.pg) / requests,
    generatorCpuPerReq: (after.generator - before.generator) / requests,
    webCpuPerReq: web.length > 0 ? (webAfter - webBefore) / requests : Number.NaN,
  });
  if (result.errors > 0) log(`  ${result.errors} errors, e.g. ${result.errorSamples.join(' | ')}`);
  return result;
}

/** The launcher's web processes (`web.mjs`), by their command line. */
function webProcesses(root: number): number[] {
  return treeMemory(root)
    .filter((m) => m.role === 'web.mjs')
    .map((m) => m.pid);
}

async function readPhases(app: App, ds: SeededDataset, label: string, postmaster: number | null) {
  const endpoint = { host: HOST, port: app.port };
  const pids = { app: app.pid, postmaster };
  // Warm-up: JIT, Next's route bundles, the connection pool, PostgreSQL's caches.
  await closedLoop({ endpoint, concurrency: 8, warmupMs: 0, durationMs: 3000, target: listTarget(ds) });
  await closedLoop({ endpoint, concurrency: 8, warmupMs: 0, durationMs: 3000, target: getTarget(ds) });
  const opts = { endpoint, rate: READ_RATE, warmupMs: WARMUP_MS, durationMs: SECONDS * 1000 };
  const list = await measure('GET /v1/cases/?status=open', label, `open ${READ_RATE}/s`, pids, () =>
    openLoop({ ...opts, target: listTarget(ds) }),
  );
  const get = await measure('GET /v1/cases/{id}/', label, `open ${READ_RATE}/s`, pids, () =>
    openLoop({ ...opts, target: getTarget(ds) }),
  );
  return { list, get };
}

/**
 * A ceiling server (`startCeiling`) driven as the read phases drive the app, after a warm-up: the
 * load generator's own latency for that answer at that rate, the floor under the app's.
 */
async function ceilingAtReadRate(
  scenario: string,
  ceiling: { port: number; pid: number },
  target: (i: number) => Target,
): Promise<LoadResult> {
  const endpoint = { host: HOST, port: ceiling.port };
  await closedLoop({ endpoint, concurrency: 8, warmupMs: 0, durationMs: 2000, target });
  return measure(scenario, '-', `open ${READ_RATE}/s`, { app: ceiling.pid, postmaster: null }, () =>
    openLoop({ endpoint, rate: READ_RATE, warmupMs: WARMUP_MS, durationMs: SECONDS * 1000, target }),
  );
}

/** The app's answers to the first list and get targets, checked: what the ceiling servers answer. */
async function sanityCheck(port: number, ds: SeededDataset): Promise<{ list: string; get: string }> {
  const list = await request(port, listTarget(ds)(0));
  const listed = JSON.parse(list.body) as { results?: unknown[] };
  const one = await request(port, getTarget(ds)(0));
  if (list.status !== 200 || one.status !== 200) {
    throw new Error(`sanity check failed: list ${list.status} ${list.body.slice(0, 200)}; get ${one.status}`);
  }
  log(
    `sanity: list answered ${listed.results?.length} cases in ${list.body.length} bytes, get ${one.body.length} bytes`,
  );
  return { list: list.body, get: one.body };
}

/**
 * The database's own ceiling for case creation in this run: 16 clients (the POST phase's
 * concurrency) each doing what a POST does below HTTP (the key lookup, the write-limit count,
 * the creation's transaction, through the same functions the procedure calls) in this process,
 * back to back, with no HTTP, tRPC or Next.js in between.
 */
async function databaseCreationCeiling(
  ds: SeededDataset,
  databaseUrl: string,
  run: string,
  postmaster: number | null,
): Promise<LoadResult> {
  const { bootRuntime } = await import('@/server/platform/boot-runtime');
  const { shutdown } = await import('@/server/platform/runtime');
  const { systemClock } = await import('@/server/platform/clock');
  const { authenticateApiKey } = await import('@/server/auth/api-keys');
  const { budgetKey } = await import('@/server/platform/data-scope');
  const { createRateLimiters } = await import('@/server/rate-limits/limiters');
  const { createCase, prepareCase, teamCaseSources } = await import('@/server/application/cases/create-case');
  const { createCaseInput } = await import('@/server/application/cases/wire');
  // This process's runtime, as a web process has it (its pools and a producer-only job queue),
  // with the write limit raised as the app's is in this bench.
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_READ_PER_MINUTE: '100000000',
    RATE_LIMIT_WRITE_PER_MINUTE: '100000000',
  });
  const runtime = await bootRuntime({ workers: false, migrate: false });
  if (runtime.databaseUrl !== databaseUrl)
    throw new Error('the configuration was read before the bench set it');
  const { env, database } = runtime;
  const limiters = createRateLimiters(runtime.rateLimitDatabase.db, env);
  const posts = postTarget(ds, run);
  const createOne = async (i: number) => {
    const target = posts(i);
    const token = target.headers.authorization?.replace('Bearer ', '') ?? '';
    const key = await authenticateApiKey(database.db, token, systemClock, limiters.spendIn('write'));
    if (!key) throw new Error('unknown key');
    await limiters.settle('write', budgetKey(key.scope), key.budgets.write, key.spent);
    // Validated as the procedure's input is, defaults included.
    const prepared = await prepareCase(
      createCaseInput.parse(JSON.parse(target.body ?? '{}')),
      teamCaseSources(database.db, key.scope),
      hashingAnswers((task) => task()),
    );
    await database.db.transaction((tx) =>
      createCase(tx, key.scope, prepared, {
        clock: systemClock,
        jobs: runtime.jobProducer,
        caseTtlSeconds: env.CASE_TTL_SECONDS,
        pageBase: env.VERIFY_URL_BASE,
        defaultLocale: env.DEFAULT_LOCALE,
      }),
    );
  };
  const result = await measure(
    'ceiling: creation statements, no HTTP',
    human(LARGE),
    'closed c=16',
    { app: process.pid, postmaster },
    () =>
      closedLoopOf({
        concurrency: 16,
        warmupMs: 1000,
        durationMs: 10_000,
        run: (i) =>
          createOne(i).then(
            () => ({ ok: true, answered: true }),
            (error: unknown) => ({ ok: false, answered: true, detail: String(error) }),
          ),
      }),
  );
  await shutdown();
  return result;
}

// ---------------------------------------------------------------------------------------------
// The same-run lean reference.

/** A workload whose requests count as answered only with `status` (201 for a creation, 200 for a get). */
const expecting =
  (target: (i: number) => Target, status: number) =>
  (i: number): Target => ({ ...target(i), expectStatus: status });

/** The application names the app's and the lean reference's connections carry (PGAPPNAME). */
const APP_NAME = 'vouch-bench';
const LEAN_APP_NAME = 'vouch-bench-lean';
/** Rounds of the comparison: in each, both sides are measured in turns, the first swapped each round. */
const LEAN_ROUNDS = Number(process.env.BENCH_LEAN_ROUNDS ?? 4);

/** One side of the comparison: its port, the processes counted as its app, and its backends' name. */
interface Side {
  name: 'Vouch' | 'lean';
  port: number;
  /** The root of its process tree (the launcher, or the lean reference itself). */
  pid: number;
  /** Its processes that serve requests (the app's web processes; the lean reference itself). */
  web: number[];
  appName: string;
  /** What its creations' subjects are tagged with (the reference's counted afterwards). */
  subjectTag: string;
}

/** A side's CPU so far, in ms: its processes, its request-serving ones, its PostgreSQL backends. */
interface SideCpu {
  app: number;
  web: number;
  pg: number;
}

/** One side's figures for one request over every round, CPU per answered request in ms. */
interface ComparedSide {
  okPerSecond: number;
  app: number;
  web: number;
  pg: number;
  answered: number;
  errors: number;
}

interface ComparedRequest {
  vouch: ComparedSide;
  lean: ComparedSide;
  /** Vouch / lean in app CPU per request, round by round. */
  appRatios: number[];
}

interface Comparison {
  get: ComparedRequest;
  create: ComparedRequest;
  landed: string;
}

/** The server's backends that a side's connections opened, by their application name. */
async function backendsOf(admin: postgres.Sql, appName: string): Promise<number[]> {
  const rows = await admin<{ pid: number }[]>`
    select pid from pg_stat_activity where application_name = ${appName}`;
  return rows.map((row) => row.pid);
}

function sideCpu(side: Side, backends: number[]): SideCpu {
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + processCpuMs(pid), 0);
  return { app: treeCpuMs(side.pid), web: sum(side.web), pg: sum(backends) };
}

/**
 * Waits (up to 20 s) until the app's worker has sent every mail due and sealed every audit entry:
 * what a creation leaves it to do is counted in the creation's cost, in the round it was made.
 */
async function workerCaughtUp(admin: postgres.Sql): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    const [left] = await admin<{ mails: number; entries: number }[]>`
      select (select count(*) from mail_outbox
               where status = 'queued' and (next_attempt_at is null or next_attempt_at <= now()))::int as mails,
             (select count(*) from audit_log where hash is null)::int as entries`;
    if (left && left.mails === 0 && left.entries === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One request of the comparison (a get, or a one-team creation), measured on both sides in turns:
 * each round drives one side, then the other (the first swapped each round), and counts each
 * side's CPU over the whole round, so both are measured across the same stretch of this machine's
 * drifting speed. A side's CPU is its processes' (the app: the launcher, web processes and worker,
 * which sends the creations' mails and seals their audit entries within the round) and its own
 * PostgreSQL backends' (told apart by application name): what the app's worker does while the
 * reference is driven counts as the app's.
 */
async function requestInTurns(
  request: 'get' | 'create',
  sides: [Side, Side],
  ds: SeededDataset,
  admin: postgres.Sql,
  run: string,
  ms: number,
): Promise<ComparedRequest> {
  const phase = request === 'get' ? LEAN_GET : LEAN_CREATE;
  // Each side's sums over the rounds, in the order of `sides`.
  const tallies = sides.map(() => ({
    cpu: { app: 0, web: 0, pg: 0 },
    answered: 0,
    errors: 0,
    okPerSecond: [] as number[],
  }));
  const appRatios: number[] = [];
  for (let round = 1; round <= LEAN_ROUNDS; round++) {
    if (request === 'create') await workerCaughtUp(admin);
    const backends = await Promise.all(sides.map((side) => backendsOf(admin, side.appName)));
    const before = sides.map((side, i) => sideCpu(side, backends[i] ?? []));
    const answered = [1, 1];
    for (const i of round % 2 === 1 ? [0, 1] : [1, 0]) {
      const side = sides[i] as Side;
      const tally = tallies[i] as (typeof tallies)[number];
      log(
        `${side.name}: ${phase.scenario} @ ${human(ds.caseCount)} (${phase.load}), round ${round} of ${LEAN_ROUNDS}`,
      );
      const result = await closedLoop({
        endpoint: { host: HOST, port: side.port },
        concurrency: phase.concurrency,
        warmupMs: 500,
        durationMs: ms,
        target:
          request === 'get'
            ? expecting(getTarget(ds), 200)
            : expecting(postOneTeamTarget(ds, `${run}${side.subjectTag}${round}`), 201),
      });
      tally.answered += result.answered;
      tally.errors += result.errors;
      tally.okPerSecond.push(result.throughput);
      answered[i] = Math.max(1, result.answered);
      if (result.errors > 0) log(`  ${result.errors} errors, e.g. ${result.errorSamples.join(' | ')}`);
    }
    if (request === 'create') await workerCaughtUp(admin);
    const appPerRequest: number[] = [];
    for (const [i, side] of sides.entries()) {
      // A backend that a pool opened during the round is counted whole (its CPU before it was 0).
      const opened = await backendsOf(admin, side.appName);
      const after = sideCpu(side, [...new Set([...(backends[i] ?? []), ...opened])]);
      const was = before[i] as SideCpu;
      const tally = tallies[i] as (typeof tallies)[number];
      tally.cpu.app += after.app - was.app;
      tally.cpu.web += after.web - was.web;
      tally.cpu.pg += after.pg - was.pg;
      appPerRequest.push((after.app - was.app) / (answered[i] as number));
    }
    appRatios.push((appPerRequest[0] as number) / (appPerRequest[1] as number));
  }
  const [vouch, lean] = tallies.map((tally): ComparedSide => {
    const n = Math.max(1, tally.answered);
    return {
      okPerSecond: tally.okPerSecond.reduce((sum, rate) => sum + rate, 0) / tally.okPerSecond.length,
      app: tally.cpu.app / n,
      web: tally.cpu.web / n,
      pg: tally.cpu.pg / n,
      answered: tally.answered,
      errors: tally.errors,
    };
  }) as [ComparedSide, ComparedSide];
  return { vouch, lean, appRatios };
}

/**
 * Vouch beside the lean reference (started here, on the app's database, the app still running):
 * the get, then the one-team creation, each in LEAN_ROUNDS rounds of turns (requestInTurns), the
 * same requests, keys and case ids on either side. Then counts the rows the reference's creations
 * left, to show that they landed.
 */
async function compareWithLean(
  app: App,
  appUrl: string,
  ds: SeededDataset,
  run: string,
  ms: { create: number; get: number },
): Promise<Comparison> {
  const lean = await startLean(appUrl);
  const probe = await request(lean.port, getTarget(ds)(0));
  if (probe.status !== 200) throw new Error(`lean reference: get answered ${probe.status} ${probe.body}`);
  const vouchSide: Side = {
    name: 'Vouch',
    port: app.port,
    pid: app.pid,
    web: webProcesses(app.pid),
    appName: APP_NAME,
    subjectTag: 't',
  };
  const leanSide: Side = {
    name: 'lean',
    port: lean.port,
    pid: lean.pid,
    web: [lean.pid],
    appName: LEAN_APP_NAME,
    subjectTag: 'L',
  };
  const sides: [Side, Side] = [vouchSide, leanSide];
  const admin = postgres(ds.url, { max: 1, onnotice: () => {} });
  try {
    for (const side of sides) {
      const warm = {
        endpoint: { host: HOST, port: side.port },
        concurrency: 8,
        warmupMs: 0,
        durationMs: 2000,
      };
      await closedLoop({ ...warm, target: getTarget(ds) });
      await closedLoop({ ...warm, target: postOneTeamTarget(ds, `${run}w${side.name}`) });
    }
    const since = new Date();
    const get = await requestInTurns('get', sides, ds, admin, run, ms.get / LEAN_ROUNDS);
    const create = await requestInTurns('create', sides, ds, admin, run, ms.create / LEAN_ROUNDS);
    // Stopped before its rows are counted, so that nothing it still had under way lands after.
    await lean.stop();

    // What the measured creations wrote (requests the generator gave up on may still have committed).
    const team = ds.teams[0];
    if (!team) throw new Error('no seeded team');
    const [count] = await admin<
      { cases: number; steps: number; events: number; mails: number; audits: number }[]
    >`
      with c as (
        select id from cases
        where team_id = ${team.id} and livemode and created_at >= ${since}
          and subject_email like ${`wave-${run}${leanSide.subjectTag}%`})
      select (select count(*) from c)::int as cases,
             (select count(*) from case_steps where case_id in (select id from c))::int as steps,
             (select count(*) from events where case_id in (select id from c) and type = 'case.created')::int as events,
             (select count(*) from mail_outbox where case_id in (select id from c))::int as mails,
             (select count(*) from audit_log
               where team_id = ${team.id} and action = 'case.created' and target in (select id::text from c))::int as audits`;
    const landed = count
      ? `lean reference: ${create.lean.answered} creations answered (${create.lean.errors} errors); its tables hold ${count.cases} cases of those rounds, ${count.steps} steps, ${count.events} case.created events, ${count.mails} queued mails, ${count.audits} audit entries`
      : 'lean reference: nothing counted';
    log(landed);
    return { get, create, landed };
  } finally {
    await lean.stop();
    await admin.end();
  }
}

/** Vouch beside the lean reference, per request: CPU of each side and the ratios. */
function leanTable(comparison: Comparison): string {
  const header = [
    'request',
    'load',
    'Vouch ok/s',
    'lean ok/s',
    'Vouch app ms',
    '(web)',
    'lean app ms',
    'app x',
    '(web x)',
    'app x by round',
    'Vouch pg ms',
    'lean pg ms',
    'pg x',
    'app+pg x',
  ];
  const ratio = (a: number, b: number) => (b > 0 ? `${fmt(a / b, 2)}x` : '-');
  const line = (name: string, load: string, { vouch, lean, appRatios }: ComparedRequest) => [
    name,
    load,
    fmt(vouch.okPerSecond, 0),
    fmt(lean.okPerSecond, 0),
    fmt(vouch.app, 2),
    fmt(vouch.web, 2),
    fmt(lean.app, 2),
    ratio(vouch.app, lean.app),
    ratio(vouch.web, lean.app),
    appRatios.map((r) => fmt(r, 2)).join(' '),
    fmt(vouch.pg, 2),
    fmt(lean.pg, 2),
    ratio(vouch.pg, lean.pg),
    ratio(vouch.app + vouch.pg, lean.app + lean.pg),
  ];
  const body = [
    line('POST /v1/cases/ (one team)', LEAN_CREATE.load, comparison.create),
    line('GET /v1/cases/{id}/', LEAN_GET.load, comparison.get),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(format)].join('\n');
}

/** The issue's targets for the comparison: a creation within 2x the lean reference's CPU (app and PostgreSQL each), a get within 2x in app CPU. */
function ratioTargets({ create, get }: Comparison): string[] {
  const x = (a: number, b: number) => `${fmt(a / b, 2)}x`;
  return [
    `  ${verdict(create.vouch.app <= 2 * create.lean.app && create.vouch.pg <= 2 * create.lean.pg)}  creation CPU within 2x the lean reference: app ${x(create.vouch.app, create.lean.app)} (web ${x(create.vouch.web, create.lean.app)}), PostgreSQL ${x(create.vouch.pg, create.lean.pg)}`,
    `  ${verdict(get.vouch.app <= 2 * get.lean.app)}  get app CPU within 2x the lean reference: ${x(get.vouch.app, get.lean.app)} (web ${x(get.vouch.web, get.lean.app)})`,
  ];
}

function leanReport(comparison: Comparison): string[] {
  return [
    'Same-run lean reference (bench/lean-reference.ts): a bare node:http server on postgres.js, on the same database and',
    'with the same requests, keys and budgets; per creation one statement for the key and its write budget and one for',
    'every row (charge, case, step, case.created, mail, audit entry); per get one for the key and one for the case.',
    `Measured in turns beside the running app: ${LEAN_ROUNDS} rounds a request, each driving one side then the other (the`,
    "first swapped each round), each side's CPU counted over the whole round, so both meet the machine's same drift.",
    'CPU in ms per answered request; "x" = Vouch / lean. Vouch app = launcher, web processes and worker (which sends the',
    "mails and seals the audit chain within the round); (web) = its web processes alone. PostgreSQL = each side's own",
    "backends (by application name), the app's worker's included.",
    '',
    leanTable(comparison),
    comparison.landed,
  ];
}

// ---------------------------------------------------------------------------------------------
// Report.

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const human = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

function table(): string {
  const header = [
    'scenario',
    'cases',
    'load',
    'ok/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    'errors',
    'app cpu ms/req',
    'pg cpu ms/req',
    'others cpu %',
  ];
  const body = rows.map((r) => [
    r.scenario,
    r.cases,
    r.load,
    fmt(r.result.throughput),
    fmt(r.result.p50, 2),
    fmt(r.result.p95, 2),
    fmt(r.result.p99, 2),
    fmt(r.result.max, 1),
    String(r.result.errors),
    fmt(r.appCpuPerReq, 2),
    fmt(r.pgCpuPerReq, 2),
    fmt(r.othersPct, 0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 3 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/**
 * What the CPU figures say the machine could do without contention: every request costs the
 * app, PostgreSQL and the generator this much CPU, and there are only so many cores.
 */
function capacityLine(scenario: string, cases: string, load: string): string {
  const row = rows.find((r) => r.scenario === scenario && r.cases === cases && r.load === load);
  if (!row) return '';
  const total =
    row.appCpuPerReq + (Number.isFinite(row.pgCpuPerReq) ? row.pgCpuPerReq : 0) + row.generatorCpuPerReq;
  return `  ${`${scenario} (${load})`.padEnd(50)} app ${fmt(row.appCpuPerReq, 2)} + pg ${fmt(row.pgCpuPerReq, 2)} + generator ${fmt(row.generatorCpuPerReq, 2)} = ${fmt(total, 2)} ms CPU/request -> at most ~${fmt((cpus().length * 1000) / total, 0)} req/s on ${cpus().length} idle cores`;
}

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const run = Date.now().toString(36);

  log('starting PostgreSQL');
  const database = await startDatabase();
  const postmaster = database.embedded ? childNamed('postgres') : null;
  if (LEAN_ONLY) {
    await leanOnly(database, run, started);
    return;
  }
  log(`seeding ${human(SMALL)} and ${human(LARGE)} cases, building the app if needed`);
  const [small, large, build] = await Promise.all([
    seedDataset(database.adminUrl, 'vouch_bench_small', SMALL),
    seedDataset(database.adminUrl, 'vouch_bench_large', LARGE),
    buildIfNeeded(DIST_DIR),
  ]);
  cleanups.push(async () => {
    if (database.embedded) return; // the whole data directory goes
    const { default: postgres } = await import('postgres');
    const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe('drop database if exists vouch_bench_small with (force)');
    await admin.unsafe('drop database if exists vouch_bench_large with (force)');
    await admin.end();
  });
  log(
    `seeded ${human(SMALL)} in ${fmt(small.seconds)} s, ${human(LARGE)} in ${fmt(large.seconds)} s; app ${build}`,
  );
  log(`  ${human(LARGE)}: ${large.timings.join(', ')}`);
  // Seeding a million cases leaves hundreds of MB of dirty pages: written out now, not by a
  // checkpoint that would fall in the middle of a measured phase.
  {
    const { default: postgres } = await import('postgres');
    const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe('checkpoint');
    await admin.end();
  }

  const explained: string[] = [];
  for (const ds of [small, large]) {
    const team = ds.teams[0];
    if (!team?.caseIds[0]) throw new Error('no seeded case');
    const queries = await explainReads(ds.url, team.id, team.caseIds[0]);
    const label = human(ds.caseCount);
    writeFileSync(
      path.join(RESULTS_DIR, `explain-${label}.txt`),
      queries.map((q) => `${q.query}\n\n${q.plan.join('\n')}\n`).join('\n----\n'),
    );
    for (const q of queries) {
      const what = /\blimit\b/.test(q.query) ? 'list page (status=open)' : 'one case by id';
      const scans = q.plan
        .filter((l) => /Scan|Sort|Limit/.test(l))
        .map((l) =>
          l
            .trim()
            .replace(/^->\s*/, '')
            .replace(/\s+\(cost=.*?\)/, ''),
        )
        .map((l) => l.replace(/\(actual time=[^)]*\)/, '').trim());
      explained.push(
        `  ${label.padEnd(4)} ${what.padEnd(24)} ${fmt(q.executionMs, 3).padStart(7)} ms  ${scans.join(' > ')}`,
      );
    }
  }

  // 10k first, then 1M: one app process at a time.
  const smallApp = await startBenchApp(database, database.appUrl(small.url), 'small');
  await sanityCheck(smallApp.port, small);
  const smallReads = await readPhases(smallApp, small, human(SMALL), postmaster);
  await smallApp.stop();

  const app = await startBenchApp(database, database.appUrl(large.url), 'large');
  const bodies = await sanityCheck(app.port, large);
  const largeReads = await readPhases(app, large, human(LARGE), postmaster);
  // The list's answer (50 cases, some 50 KB): the generator's own tail for an answer that size.
  const listCeilingServer = await startCeiling(bodies.list);
  const listCeiling = await ceilingAtReadRate(
    "ceiling: bare node:http, the list's body",
    listCeilingServer,
    listTarget(large),
  );
  await listCeilingServer.stop();
  const endpoint = { host: HOST, port: app.port };
  const pids = { app: app.pid, postmaster };

  const ceiling = await startCeiling(bodies.get);
  const ceilingEndpoint = { host: HOST, port: ceiling.port };
  const ceilingTarget = getTarget(large);
  const ceilingOpen = await ceilingAtReadRate('ceiling: bare node:http, same body', ceiling, ceilingTarget);
  const ceilingMax = await measure(
    'ceiling: bare node:http, same body',
    '-',
    'closed c=32',
    { app: ceiling.pid, postmaster: null },
    () =>
      closedLoop({
        endpoint: ceilingEndpoint,
        concurrency: 32,
        warmupMs: 1000,
        durationMs: 5000,
        target: ceilingTarget,
      }),
  );
  await ceiling.stop();
  const getMax = await measure(LEAN_GET.scenario, human(LARGE), LEAN_GET.load, pids, () =>
    closedLoop({
      endpoint,
      concurrency: LEAN_GET.concurrency,
      warmupMs: 1000,
      durationMs: LEAN_GET.ms,
      target: getTarget(large),
    }),
  );

  const postOpen = await measure(
    'POST /v1/cases/ (email only)',
    human(LARGE),
    `open ${WRITE_RATE}/s`,
    pids,
    () =>
      openLoop({
        endpoint,
        rate: WRITE_RATE,
        warmupMs: WARMUP_MS,
        durationMs: SECONDS * 1000,
        target: postTarget(large, `${run}o`),
      }),
  );
  const postMax = await measure('POST /v1/cases/ (email only)', human(LARGE), 'closed c=16', pids, () =>
    closedLoop({
      endpoint,
      concurrency: 16,
      warmupMs: 1000,
      durationMs: 10_000,
      target: postTarget(large, `${run}c`),
    }),
  );
  // One team's hiring wave: single creates from 16 and 64 connections, and batches of 100.
  const oneTeam = await measure(LEAN_CREATE.scenario, human(LARGE), LEAN_CREATE.load, pids, () =>
    closedLoop({
      endpoint,
      concurrency: LEAN_CREATE.concurrency,
      warmupMs: 1000,
      durationMs: LEAN_CREATE.ms,
      target: postOneTeamTarget(large, `${run}t`),
    }),
  );
  const oneTeamBurst = await measure('POST /v1/cases/ one team', human(LARGE), 'closed c=64', pids, () =>
    closedLoop({
      endpoint,
      concurrency: 64,
      warmupMs: 1000,
      durationMs: 5000,
      target: postOneTeamTarget(large, `${run}u`),
    }),
  );
  const batches = await measure(
    'POST /v1/cases/batch/ one team (100 a batch)',
    human(LARGE),
    'closed c=4',
    pids,
    () =>
      closedLoop({
        endpoint,
        concurrency: 4,
        warmupMs: 1000,
        durationMs: 10_000,
        target: batchOneTeamTarget(large, `${run}b`),
      }),
  );
  await measure(FLOOR_SCENARIO, '-', 'closed c=16', pids, () =>
    closedLoop({
      endpoint,
      concurrency: 16,
      warmupMs: 1000,
      durationMs: 5000,
      target: floorTarget(large, `${run}f`),
    }),
  );
  const comparison = await compareWithLean(app, database.appUrl(large.url), large, run, {
    create: LEAN_CREATE.ms,
    get: LEAN_GET.ms,
  });
  const memory = treeMemory(app.pid);
  await app.stop();
  const creationCeiling = await databaseCreationCeiling(
    large,
    database.appUrl(large.url),
    `${run}d`,
    postmaster,
  );

  const totalRss = memory.reduce((sum, m) => sum + m.rssMb, 0);
  // The target asks it of each web process (the worker and the launcher count in the total only).
  const webRss = memory.filter((m) => m.role === 'web.mjs').map((m) => m.rssMb);
  const launcherRss = memory.find((m) => m.role === 'launcher.mjs')?.rssMb ?? Number.NaN;
  const webCount = webRss.length;
  const ratio = (a: number, b: number) => a / b;
  const listRatio50 = ratio(largeReads.list.p50, smallReads.list.p50);
  const listRatio99 = ratio(largeReads.list.p99, smallReads.list.p99);
  const getRatio50 = ratio(largeReads.get.p50, smallReads.get.p50);
  const getRatio99 = ratio(largeReads.get.p99, smallReads.get.p99);
  const readsOk = (r: LoadResult) => r.p50 < 10 && r.p99 < 40 && r.errors === 0;
  const sustained = Math.max(postOpen.throughput, postMax.throughput);

  const report = [
    '',
    `Vouch API benchmark — ${new Date().toISOString()} — ${TEAM_COUNT} teams, ${human(SMALL)} and ${human(LARGE)} cases`,
    `Machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )} at the end; generator, app (the launcher, as npm start runs it: ${webCount} web processes and a worker) and PostgreSQL${database.embedded ? ' (embedded)' : ''} on one host.`,
    `Latency in ms; open loop measured from each request's scheduled time (${SECONDS} s after ${WARMUP_MS / 1000} s warm-up).`,
    'CPU columns: CPU time of every app process (launcher, web processes, worker; for the ceiling rows: of the bare',
    'server, or of this bench process for the database ceiling) / of all PostgreSQL',
    'processes over the phase, per request;',
    '"others": CPU used meanwhile by processes outside the bench, as a share of all cores (contention).',
    '',
    table(),
    '',
    'Query plans at each size (EXPLAIN ANALYZE of the SQL the app sends, warm):',
    ...explained,
    '',
    `Latency ratio ${human(LARGE)} / ${human(SMALL)}:  list p50 ${fmt(listRatio50, 2)}x  p99 ${fmt(listRatio99, 2)}x   get p50 ${fmt(getRatio50, 2)}x  p99 ${fmt(getRatio99, 2)}x`,
    `Fraction of the ceiling (GET /v1/cases/{id}/ at ${human(LARGE)} vs bare node:http): max throughput ${fmt((100 * getMax.throughput) / ceilingMax.throughput)} %  (${fmt(getMax.throughput, 0)} vs ${fmt(ceilingMax.throughput, 0)} req/s); p50 at ${READ_RATE}/s ${fmt(largeReads.get.p50, 2)} vs ${fmt(ceilingOpen.p50, 2)} ms`,
    `RSS after the run: ${memory.map((m) => `${m.role} ${fmt(m.rssMb, 0)} MB (peak ${fmt(m.peakMb, 0)})`).join(', ')}; all together ${fmt(totalRss, 0)} MB`,
    `POST against the database's own ceiling (same concurrency, no HTTP): ${fmt(postMax.throughput, 0)} of ${fmt(creationCeiling.throughput, 0)} cases/s = ${fmt((100 * postMax.throughput) / creationCeiling.throughput, 0)} %`,
    '',
    `CPU cost per answered request at ${human(LARGE)} (independent of contention; the ceiling for an uncontended machine):`,
    capacityLine('GET /v1/cases/?status=open', human(LARGE), `open ${READ_RATE}/s`),
    capacityLine('GET /v1/cases/{id}/', human(LARGE), 'closed c=32'),
    capacityLine('POST /v1/cases/ (email only)', human(LARGE), 'closed c=16'),
    capacityLine(FLOOR_SCENARIO, '-', 'closed c=16'),
    capacityLine('ceiling: bare node:http, same body', '-', 'closed c=32'),
    capacityLine('ceiling: creation statements, no HTTP', human(LARGE), 'closed c=16'),
    '',
    ...leanReport(comparison),
    '',
    'Targets:',
    `  ${verdict(readsOk(largeReads.list))}  GET list  at ${human(LARGE)}: p50 ${fmt(largeReads.list.p50, 2)} < 10 ms, p99 ${fmt(largeReads.list.p99, 2)} < 40 ms (a bare server's same answer: p99 ${fmt(listCeiling.p99, 2)} ms)`,
    `  ${verdict(readsOk(largeReads.get))}  GET by id at ${human(LARGE)}: p50 ${fmt(largeReads.get.p50, 2)} < 10 ms, p99 ${fmt(largeReads.get.p99, 2)} < 40 ms`,
    `  ${verdict(listRatio50 <= 1.3 && listRatio99 <= 1.3)}  GET list  ${human(LARGE)}/${human(SMALL)} within 1.3x (p50 ${fmt(listRatio50, 2)}x, p99 ${fmt(listRatio99, 2)}x)`,
    `  ${verdict(getRatio50 <= 1.3 && getRatio99 <= 1.3)}  GET by id ${human(LARGE)}/${human(SMALL)} within 1.3x (p50 ${fmt(getRatio50, 2)}x, p99 ${fmt(getRatio99, 2)}x)`,
    `  ${verdict(sustained >= 400 && postOpen.p99 < 100 && postOpen.errors === 0)}  POST: ${fmt(postOpen.throughput, 0)} cases/s at ${WRITE_RATE}/s offered (p99 ${fmt(postOpen.p99, 2)} < 100 ms), ${fmt(postMax.throughput, 0)} cases/s max (closed loop, p99 ${fmt(postMax.p99, 2)} ms)`,
    `  ${verdict(postMax.throughput >= 1000 && postMax.errors === 0)}  POST spread over ${TEAM_COUNT} teams: ${fmt(postMax.throughput, 0)} >= 1,000 cases/s (c=16)`,
    `  ${verdict(oneTeam.throughput >= 1000 && oneTeam.p99 < 100 && oneTeam.errors === 0)}  POST one team, c=16: ${fmt(oneTeam.throughput, 0)} >= 1,000 cases/s, p99 ${fmt(oneTeam.p99, 2)} < 100 ms, ${oneTeam.errors} errors`,
    `  ${verdict(oneTeamBurst.p99 < 250 && oneTeamBurst.errors === 0)}  POST one team, c=64: p99 ${fmt(oneTeamBurst.p99, 2)} < 250 ms, ${oneTeamBurst.errors} errors (${fmt(oneTeamBurst.throughput, 0)} cases/s)`,
    `  ${verdict(batches.throughput * 100 >= 3000 && batches.p99 < 400 && batches.errors === 0)}  batches of 100, one team, c=4: ${fmt(batches.throughput * 100, 0)} >= 3,000 cases/s, p99 per batch ${fmt(batches.p99, 2)} < 400 ms`,
    ...ratioTargets(comparison),
    `  ${verdict(webRss.every((rss) => rss < 300) && totalRss < 600)}  RSS: largest web process ${fmt(Math.max(...webRss), 0)} MB < 300 MB, all ${fmt(totalRss, 0)} MB < 600 MB`,
    `  ${verdict(launcherRss < 60)}  RSS: the launcher ${fmt(launcherRss, 0)} MB < 60 MB`,
    '',
    `Total bench time ${fmt((performance.now() - started) / 1000, 0)} s.`,
  ].join('\n');
  process.stdout.write(`${report}\n`);
  writeFileSync(path.join(RESULTS_DIR, 'latest.txt'), `${report}\n`);
}

/**
 * BENCH_ONLY=lean: the small dataset only, the app's get and one-team creation in turns with the
 * lean reference's, BENCH_SECONDS for each side and request; prints the comparison
 * (bench/results/lean.txt).
 */
async function leanOnly(database: BenchDatabase, run: string, started: number): Promise<void> {
  log(`seeding ${human(SMALL)} cases, building the app if needed`);
  const [ds, build] = await Promise.all([
    seedDataset(database.adminUrl, 'vouch_bench_small', SMALL),
    buildIfNeeded(DIST_DIR),
  ]);
  cleanups.push(async () => {
    if (database.embedded) return;
    const { default: postgres } = await import('postgres');
    const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe('drop database if exists vouch_bench_small with (force)');
    await admin.end();
  });
  log(`seeded ${human(SMALL)} in ${fmt(ds.seconds)} s; app ${build}`);
  {
    const { default: postgres } = await import('postgres');
    const admin = postgres(database.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe('checkpoint');
    await admin.end();
  }
  const ms = { create: SECONDS * 1000, get: SECONDS * 1000 };
  const app = await startBenchApp(database, database.appUrl(ds.url), 'small');
  await sanityCheck(app.port, ds);
  const comparison = await compareWithLean(app, database.appUrl(ds.url), ds, run, ms);
  await app.stop();
  const report = [
    '',
    `Vouch vs the lean reference — ${new Date().toISOString()} — ${TEAM_COUNT} teams, ${human(SMALL)} cases, ${SECONDS} s a side and request in ${LEAN_ROUNDS} rounds (BENCH_ONLY=lean)`,
    `Machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end; PostgreSQL${database.embedded ? ' (embedded)' : ''} on the same host.`,
    '',
    ...leanReport(comparison),
    '',
    'Targets:',
    ...ratioTargets(comparison),
    '',
    `Total bench time ${fmt((performance.now() - started) / 1000, 0)} s.`,
  ].join('\n');
  process.stdout.write(`${report}\n`);
  writeFileSync(path.join(RESULTS_DIR, 'lean.txt'), `${report}\n`);
}

async function cleanup(): Promise<void> {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (error) {
      log(`cleanup: ${String(error)}`);
    }
  }
  cleanups.length = 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup().finally(() => process.exit(130));
  });
}

// Bounded: a wedged phase must not hold the machine (or its PostgreSQL) forever.
const watchdog = setTimeout(() => {
  log('gave up after 15 minutes');
  cleanup().finally(() => process.exit(1));
}, 15 * 60_000);
watchdog.unref();

main()
  .then(cleanup)
  .then(() => process.exit(0))
  .catch(async (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    await cleanup();
    process.exit(1);
  });

/**
 * `npm run bench:api`: latency and throughput of the public API on this machine, with the load
 * generator, the app as `npm start` runs it (the launcher, its web processes and worker) and
 * PostgreSQL all on the same host.
 *
 * Seeds 10,000 and 1,000,000 cases (100 teams each, in two databases), runs the built app against
 * each with the rate limits raised through its configuration, measures the two list/get reads at a
 * steady open-loop 200 requests/s, case creation, and a bare `node:http` server answering the same
 * body (the ceiling), and the database doing a creation's statements with no HTTP (the write
 * ceiling), then prints one table. It reports; it does not fail on a missed target.
 *
 * Beside it, the same-run lean reference (bench/lean-reference.ts): a bare `node:http` server on
 * postgres.js alone, on the same database, writing a creation's rows in one statement and reading a
 * case in one, driven as the app's one-team creation (closed c=16) and get (closed c=32) phases
 * are; the report sets Vouch's app and PostgreSQL CPU per request beside its, as ratios.
 *
 * Environment: BENCH_DATABASE_URL (use that server instead of an embedded one; two databases are
 * created and dropped on it), BENCH_LARGE_CASES / BENCH_SMALL_CASES (dataset sizes),
 * BENCH_SECONDS (length of each measured phase), BENCH_CPU_PROF=1 (V8 CPU profiles of the app
 * into bench/results/profiles), BENCH_ONLY=lean (the quick comparison: only the small dataset
 * (BENCH_SMALL_CASES), the app's get and one-team creation, then the lean reference's, each phase
 * BENCH_SECONDS long: a couple of minutes).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
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
  ms: 10_000,
};
const LEAN_GET = { scenario: 'GET /v1/cases/{id}/', load: 'closed c=32', concurrency: 32, ms: 5000 };
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

async function sanityCheck(port: number, ds: SeededDataset): Promise<string> {
  const list = await request(port, listTarget(ds)(0));
  const listed = JSON.parse(list.body) as { results?: unknown[] };
  const one = await request(port, getTarget(ds)(0));
  if (list.status !== 200 || one.status !== 200) {
    throw new Error(`sanity check failed: list ${list.status} ${list.body.slice(0, 200)}; get ${one.status}`);
  }
  log(`sanity: list answered ${listed.results?.length} cases, get ${one.body.length} bytes`);
  return one.body;
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

/** The two phases the lean reference is compared on, as measured (rows of the report's table). */
interface Compared {
  create: Row;
  get: Row;
}

function rowOf(scenario: string, cases: string, load: string): Row {
  const row = rows.find((r) => r.scenario === scenario && r.cases === cases && r.load === load);
  if (!row) throw new Error(`no row ${scenario} @ ${cases} (${load})`);
  return row;
}

/**
 * The compared get and one-team creation on one server (the app, or the lean reference), each
 * warmed up first and measured as the report's rows named `prefix` + the scenario: the same
 * requests, keys and case ids on either. `run` tags the creations' subjects.
 */
async function measureCompared(
  server: { port: number; pid: number },
  ds: SeededDataset,
  postmaster: number | null,
  ms: { create: number; get: number; warmup: number },
  prefix: string,
  run: string,
): Promise<Compared & { created: LoadResult }> {
  const endpoint = { host: HOST, port: server.port };
  const pids = { app: server.pid, postmaster };
  const label = human(ds.caseCount);
  const warm = { endpoint, concurrency: 8, warmupMs: 0, durationMs: ms.warmup };
  await closedLoop({ ...warm, target: getTarget(ds) });
  await closedLoop({ ...warm, target: postOneTeamTarget(ds, `${run}w`) });
  await measure(`${prefix}${LEAN_GET.scenario}`, label, LEAN_GET.load, pids, () =>
    closedLoop({
      endpoint,
      concurrency: LEAN_GET.concurrency,
      warmupMs: 1000,
      durationMs: ms.get,
      target: expecting(getTarget(ds), 200),
    }),
  );
  const created = await measure(`${prefix}${LEAN_CREATE.scenario}`, label, LEAN_CREATE.load, pids, () =>
    closedLoop({
      endpoint,
      concurrency: LEAN_CREATE.concurrency,
      warmupMs: 1000,
      durationMs: ms.create,
      target: expecting(postOneTeamTarget(ds, run), 201),
    }),
  );
  return {
    get: rowOf(`${prefix}${LEAN_GET.scenario}`, label, LEAN_GET.load),
    create: rowOf(`${prefix}${LEAN_CREATE.scenario}`, label, LEAN_CREATE.load),
    created,
  };
}

/**
 * The app's get (closed c=32) and one-team creation (closed c=16), warmed up first: what the
 * quick comparison (BENCH_ONLY=lean) measures of the app; the full run has them among its phases.
 */
async function appComparedPhases(
  app: App,
  ds: SeededDataset,
  run: string,
  postmaster: number | null,
  ms: { create: number; get: number },
): Promise<Compared> {
  const { get, create } = await measureCompared(
    { port: app.port, pid: app.pid },
    ds,
    postmaster,
    { ...ms, warmup: 3000 },
    '',
    `${run}t`,
  );
  return { get, create };
}

/**
 * The lean reference on the app's database (the app stopped, so that its worker sends none of the
 * reference's mails), driven as the app was: the same requests, keys and case ids. Then counts
 * the rows its measured creations left, to show that they landed.
 */
async function leanPhases(
  appUrl: string,
  ds: SeededDataset,
  run: string,
  postmaster: number | null,
  ms: { create: number; get: number },
): Promise<Compared & { landed: string }> {
  const lean = await startLean(appUrl);
  const probe = await request(lean.port, getTarget(ds)(0));
  if (probe.status !== 200) throw new Error(`lean reference: get answered ${probe.status} ${probe.body}`);
  const since = new Date();
  const { get, create, created } = await measureCompared(
    lean,
    ds,
    postmaster,
    { ...ms, warmup: 2000 },
    'lean: ',
    `${run}L`,
  );
  await lean.stop();

  // What the measured creations wrote (requests the generator gave up on may still have committed).
  const team = ds.teams[0];
  if (!team) throw new Error('no seeded team');
  const { default: postgres } = await import('postgres');
  const sql = postgres(ds.url, { max: 1, onnotice: () => {} });
  const [count] = await sql<
    { cases: number; steps: number; events: number; mails: number; audits: number }[]
  >`
    with c as (
      select id from cases
      where team_id = ${team.id} and livemode and created_at >= ${since}
        and subject_email like ${`wave-${run}L-%`})
    select (select count(*) from c)::int as cases,
           (select count(*) from case_steps where case_id in (select id from c))::int as steps,
           (select count(*) from events where case_id in (select id from c) and type = 'case.created')::int as events,
           (select count(*) from mail_outbox where case_id in (select id from c))::int as mails,
           (select count(*) from audit_log
             where team_id = ${team.id} and action = 'case.created' and target in (select id::text from c))::int as audits`;
  await sql.end();
  const landed = count
    ? `lean reference: ${created.answered} creations answered (${created.errors} errors in the measured window); its tables hold ${count.cases} cases of that phase, ${count.steps} steps, ${count.events} case.created events, ${count.mails} queued mails, ${count.audits} audit entries`
    : 'lean reference: nothing counted';
  log(landed);
  return { get, create, landed };
}

/** Vouch beside the lean reference, per request: CPU of each side and the ratios. */
function leanTable(vouch: Compared, lean: Compared): string {
  const header = [
    'request',
    'load',
    'Vouch ok/s',
    'lean ok/s',
    'Vouch app ms',
    '(web)',
    'lean app ms',
    'app x',
    'Vouch pg ms',
    'lean pg ms',
    'pg x',
    'app+pg x',
  ];
  const ratio = (a: number, b: number) => (b > 0 ? `${fmt(a / b, 1)}x` : '-');
  const line = (name: string, load: string, v: Row, l: Row) => [
    name,
    load,
    fmt(v.result.throughput, 0),
    fmt(l.result.throughput, 0),
    fmt(v.appCpuPerReq, 2),
    fmt(v.webCpuPerReq, 2),
    fmt(l.appCpuPerReq, 2),
    ratio(v.appCpuPerReq, l.appCpuPerReq),
    fmt(v.pgCpuPerReq, 2),
    fmt(l.pgCpuPerReq, 2),
    ratio(v.pgCpuPerReq, l.pgCpuPerReq),
    ratio(v.appCpuPerReq + v.pgCpuPerReq, l.appCpuPerReq + l.pgCpuPerReq),
  ];
  const body = [
    line('POST /v1/cases/ (one team)', LEAN_CREATE.load, vouch.create, lean.create),
    line('GET /v1/cases/{id}/', LEAN_GET.load, vouch.get, lean.get),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(format)].join('\n');
}

function leanReport(vouch: Compared, lean: Compared & { landed: string }): string[] {
  return [
    'Same-run lean reference (bench/lean-reference.ts): a bare node:http server on postgres.js, on the same database and',
    'with the same requests, keys and budgets; per creation one statement for the key and its write budget and one for',
    'every row (charge, case, step, case.created, mail, audit entry); per get one for the key and one for the case. CPU',
    'in ms per answered request; "x" = Vouch / lean. Vouch app = launcher, web processes and worker (which sends the',
    'mails and seals the audit chain meanwhile); (web) = its web processes alone. PostgreSQL = every backend of the',
    "server, so Vouch's includes its worker's. The lean reference is one process; the two run one after the other, so",
    'the figures drift with the machine (see "others cpu %"): read the ratios, not the third digit.',
    '',
    leanTable(vouch, lean),
    lean.landed,
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
    await leanOnly(database, postmaster, run, started);
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
  const body = await sanityCheck(app.port, large);
  const largeReads = await readPhases(app, large, human(LARGE), postmaster);
  const endpoint = { host: HOST, port: app.port };
  const pids = { app: app.pid, postmaster };

  const ceiling = await startCeiling(body);
  const ceilingEndpoint = { host: HOST, port: ceiling.port };
  const ceilingTarget = getTarget(large);
  await closedLoop({
    endpoint: ceilingEndpoint,
    concurrency: 8,
    warmupMs: 0,
    durationMs: 2000,
    target: ceilingTarget,
  });
  const ceilingOpen = await measure(
    'ceiling: bare node:http, same body',
    '-',
    `open ${READ_RATE}/s`,
    { app: ceiling.pid, postmaster: null },
    () =>
      openLoop({
        endpoint: ceilingEndpoint,
        rate: READ_RATE,
        warmupMs: WARMUP_MS,
        durationMs: SECONDS * 1000,
        target: ceilingTarget,
      }),
  );
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
  const memory = treeMemory(app.pid);
  await app.stop();
  const vouchCompared: Compared = {
    create: rowOf(LEAN_CREATE.scenario, human(LARGE), LEAN_CREATE.load),
    get: rowOf(LEAN_GET.scenario, human(LARGE), LEAN_GET.load),
  };
  const leanCompared = await leanPhases(database.appUrl(large.url), large, run, postmaster, {
    create: LEAN_CREATE.ms,
    get: LEAN_GET.ms,
  });
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
    ...leanReport(vouchCompared, leanCompared),
    '',
    'Targets:',
    `  ${verdict(readsOk(largeReads.list))}  GET list  at ${human(LARGE)}: p50 ${fmt(largeReads.list.p50, 2)} < 10 ms, p99 ${fmt(largeReads.list.p99, 2)} < 40 ms`,
    `  ${verdict(readsOk(largeReads.get))}  GET by id at ${human(LARGE)}: p50 ${fmt(largeReads.get.p50, 2)} < 10 ms, p99 ${fmt(largeReads.get.p99, 2)} < 40 ms`,
    `  ${verdict(listRatio50 <= 1.3 && listRatio99 <= 1.3)}  GET list  ${human(LARGE)}/${human(SMALL)} within 1.3x (p50 ${fmt(listRatio50, 2)}x, p99 ${fmt(listRatio99, 2)}x)`,
    `  ${verdict(getRatio50 <= 1.3 && getRatio99 <= 1.3)}  GET by id ${human(LARGE)}/${human(SMALL)} within 1.3x (p50 ${fmt(getRatio50, 2)}x, p99 ${fmt(getRatio99, 2)}x)`,
    `  ${verdict(sustained >= 400 && postOpen.p99 < 100 && postOpen.errors === 0)}  POST: ${fmt(postOpen.throughput, 0)} cases/s at ${WRITE_RATE}/s offered (p99 ${fmt(postOpen.p99, 2)} < 100 ms), ${fmt(postMax.throughput, 0)} cases/s max (closed loop, p99 ${fmt(postMax.p99, 2)} ms)`,
    `  ${verdict(postMax.throughput >= 1000 && postMax.errors === 0)}  POST spread over ${TEAM_COUNT} teams: ${fmt(postMax.throughput, 0)} >= 1,000 cases/s (c=16)`,
    `  ${verdict(oneTeam.throughput >= 1000 && oneTeam.p99 < 100 && oneTeam.errors === 0)}  POST one team, c=16: ${fmt(oneTeam.throughput, 0)} >= 1,000 cases/s, p99 ${fmt(oneTeam.p99, 2)} < 100 ms, ${oneTeam.errors} errors`,
    `  ${verdict(oneTeamBurst.p99 < 250 && oneTeamBurst.errors === 0)}  POST one team, c=64: p99 ${fmt(oneTeamBurst.p99, 2)} < 250 ms, ${oneTeamBurst.errors} errors (${fmt(oneTeamBurst.throughput, 0)} cases/s)`,
    `  ${verdict(batches.throughput * 100 >= 2000 && batches.p99 < 500 && batches.errors === 0)}  batches of 100, one team, c=4: ${fmt(batches.throughput * 100, 0)} >= 2,000 cases/s, p99 per batch ${fmt(batches.p99, 2)} < 500 ms`,
    `  ${verdict(webRss.every((rss) => rss < 300) && totalRss < 600)}  RSS: largest web process ${fmt(Math.max(...webRss), 0)} MB < 300 MB, all ${fmt(totalRss, 0)} MB < 600 MB`,
    `  ${verdict(launcherRss < 60)}  RSS: the launcher ${fmt(launcherRss, 0)} MB < 60 MB`,
    '',
    `Total bench time ${fmt((performance.now() - started) / 1000, 0)} s.`,
  ].join('\n');
  process.stdout.write(`${report}\n`);
  writeFileSync(path.join(RESULTS_DIR, 'latest.txt'), `${report}\n`);
}

/**
 * BENCH_ONLY=lean: the small dataset only, the app's get and one-team creation, then the lean
 * reference's, each BENCH_SECONDS long; prints both tables (bench/results/lean.txt).
 */
async function leanOnly(
  database: BenchDatabase,
  postmaster: number | null,
  run: string,
  started: number,
): Promise<void> {
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
  const vouch = await appComparedPhases(app, ds, run, postmaster, ms);
  await app.stop();
  const lean = await leanPhases(database.appUrl(ds.url), ds, run, postmaster, ms);
  const report = [
    '',
    `Vouch vs the lean reference — ${new Date().toISOString()} — ${TEAM_COUNT} teams, ${human(SMALL)} cases, ${SECONDS} s a phase (BENCH_ONLY=lean)`,
    `Machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end; PostgreSQL${database.embedded ? ' (embedded)' : ''} on the same host.`,
    '',
    table(),
    '',
    ...leanReport(vouch, lean),
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

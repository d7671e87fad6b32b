/**
 * `npx tsx bench/profile.ts ping,get,list,post`: where the app's CPU time goes, per endpoint (`floor`:
 * a POST to a route handler that answers at once, what Next.js alone costs).
 * Seeds a small dataset (PROFILE_CASES, default 10,000), runs the built app (.next-bench) — under
 * V8's CPU profiler unless PROFILE=0 —, drives each endpoint with a closed loop, and prints the
 * app's and PostgreSQL's CPU time per request, then the heaviest packages and functions of the
 * steady state. `npx tsx bench/profile.ts - <file.cpuprofile>` summarises an existing profile.
 * PROFILE_TREE profiles another checkout's build (a `git worktree` of an earlier commit, with its
 * own build), for a before-and-after breakdown.
 * PROFILE_CONCURRENCY sets the requests in flight (default 4). PROFILE_SQL=1 also lists the statements PostgreSQL spent its time on in each scenario
 * (pg_stat_statements), with their calls per request.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SourceMapConsumer } from 'source-map-js';
import { deleteEmbeddedData, startEmbeddedPostgres } from '@/db/embedded';
import { closedLoop } from './load';
import { processCpu, processCpuMs } from './process-cpu';
import { seedDataset } from './seed';
import { resetStatementStats, STATEMENT_STATS_SETTINGS, statementStats } from './statement-stats';
import { scenarioTarget } from './workloads';

process.env.NEXT_DIST_DIR ??= '.next-bench';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount: number;
  children?: number[];
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const chunks = url.indexOf('.next-bench/');
  if (chunks >= 0) return `app:${url.slice(chunks + '.next-bench/'.length)}`;
  return url.replace(/^file:\/\//, '') || '(native)';
}

const consumers = new Map<string, SourceMapConsumer | null>();

/** Bundled app code is minified: name its frames by their original file and line instead. */
function originalFrame(url: string, line: number, column: number): string | null {
  if (!url.includes('.next-bench/') && !url.includes('/dist/')) return null;
  const file = url.replace(/^file:\/\//, '');
  let consumer = consumers.get(file);
  if (consumer === undefined) {
    consumer = existsSync(`${file}.map`)
      ? new SourceMapConsumer(JSON.parse(readFileSync(`${file}.map`, 'utf8')))
      : null;
    consumers.set(file, consumer);
  }
  if (!consumer) return null;
  const at = consumer.originalPositionFor({ line: line + 1, column });
  if (!at.source) return null;
  const source = at.source
    .replace(/^.*?node_modules\//, '')
    .replace(/^turbopack:\/\/\/\[project\]\//, '')
    .replace(/^(\.\.\/)+/, '');
  return `${at.name ?? '?'} ${source}:${at.line}`;
}

/**
 * What a request's CPU is spent on, by the code a sample was in: the innermost frame of the sample's
 * stack that belongs to a category (node's own internals, native code and anonymous glue belong to
 * none, so a socket write made by postgres.js is SQL and one made answering a request is the HTTP
 * path). `source` is a frame's original file (source-mapped) or its package.
 */
const CATEGORIES: ReadonlyArray<readonly [string, RegExp]> = [
  ['logging', /^(pino|sonic-boom|server\/platform\/logger)/],
  [
    'tracing and metrics',
    /^(@opentelemetry|server\/platform\/(tracing|metrics)|server\/api\/http\/server-span)/,
  ],
  [
    'SQL: postgres.js, drizzle, statements',
    /^(postgres|drizzle-orm|db\/|server\/[^/]+\/queries\.ts|pg-boss)/,
  ],
  [
    'validation: zod, input checks',
    /^(zod|zod-openapi|server\/platform\/json-input|server\/api\/validation-messages)/,
  ],
  ['authentication and budgets', /^(server\/auth\/|server\/rate-limits\/|rate-limiter-flexible)/],
  ['serialization: answers as JSON', /^(server\/application\/[^/]+\/wire\.ts|\(json\))/],
  [
    'mails rendered',
    /^(intl-messageformat|@formatjs|server\/i18n\/|server\/mail\/|server\/verification\/(start-verification|methods\/([^/]+\/)?link-mail)|server\/platform\/outbox\/enqueue-mail)/,
  ],
  [
    'tRPC, the REST facade, the web process',
    /^(@trpc|trpc-to-openapi|server\/api\/|processes\/|node:_http|node:net)/,
  ],
  ['use cases and domains', /^server\//],
];

function categoryOf(source: string): string | null {
  for (const [name, pattern] of CATEGORIES) if (pattern.test(source)) return name;
  return null;
}

/** A frame's source for categoryOf: its original file, its package, or `(json)` for JSON's natives. */
function frameSource(node: ProfileNode): string {
  const { url, lineNumber, columnNumber, functionName } = node.callFrame;
  if (!url && (functionName === 'stringify' || functionName === 'parse')) return '(json)';
  const orig = originalFrame(url, lineNumber, columnNumber)?.split(' ')[1]?.split(':')[0];
  if (orig) return orig;
  if (url.startsWith('node:')) return url;
  return shortUrl(url);
}

function summarise(
  file: string,
  lastSeconds = 10,
  top = Number(process.env.PROFILE_TOP ?? 30),
  /** The app's CPU per request in the profiled phase: the breakdown is then in ms per request too. */
  perRequest?: number,
): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (node: ProfileNode) =>
    originalFrame(node.callFrame.url, node.callFrame.lineNumber, node.callFrame.columnNumber) ??
    `${node.callFrame.functionName || '(anonymous)'} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber}`;

  // Only the steady state: samples from the last `lastSeconds` (start-up and warm-up excluded).
  const times: number[] = [];
  let t = 0;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  const cutoff = t - lastSeconds * 1e6;
  const self = new Map<string, number>();
  const selfByPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byCategory = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    if ((times[i] as number) < cutoff) return;
    const node = byId.get(id) as ProfileNode;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (node.callFrame.functionName === '(idle)') {
      idle += ms;
      return;
    }
    busy += ms;
    self.set(label(node), (self.get(label(node)) ?? 0) + ms);
    let category: string | null =
      node.callFrame.functionName === '(garbage collector)' ? 'garbage collection' : null;
    let sawHttp = false;
    for (let at: number | undefined = id; at !== undefined && !category; at = parent.get(at)) {
      const source = frameSource(byId.get(at) as ProfileNode);
      sawHttp ||= source.startsWith('node:_http') || source === 'node:net';
      // node's internals and the event loop's glue name no category: the caller above them does.
      if (source.startsWith('node:') || source === '(native)') continue;
      category = categoryOf(source);
    }
    category ??= sawHttp ? 'tRPC, the REST facade, the web process' : 'other (event loop, native)';
    byCategory.set(category, (byCategory.get(category) ?? 0) + ms);
    const orig = originalFrame(node.callFrame.url, node.callFrame.lineNumber, node.callFrame.columnNumber);
    const source = orig?.split(' ')[1]?.split(':')[0];
    const segments = source?.split('/') ?? [];
    const pkg = !source
      ? shortUrl(node.callFrame.url)
      : /^(server|db|app|jobs)\//.test(source)
        ? source
        : segments[0]?.startsWith('@')
          ? `${segments[0]}/${segments[1]}`
          : (segments[0] ?? source);
    selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = label(byId.get(at) as ProfileNode);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  });
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1).padStart(5)} %`;
  return [
    `profile ${path.basename(file)}, last ${lastSeconds} s: ${(busy / 1000).toFixed(2)} s busy, ${(idle / 1000).toFixed(2)} s idle`,
    '',
    'where the time goes (by the innermost frame of a category):',
    ...[...byCategory.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(
        ([k, v]) =>
          `  ${pct(v)}${perRequest ? `  ${((perRequest * v) / busy).toFixed(3)} ms/req` : ''}  ${k}`,
      ),
    '',
    'self time by package/file:',
    ...sorted(selfByPackage).map(([k, v]) => `  ${pct(v)}  ${k}`),
    '',
    'self time by function:',
    ...sorted(self).map(([k, v]) => `  ${pct(v)}  ${k}`),
    '',
    'inclusive time by function:',
    ...sorted(inclusive).map(([k, v]) => `  ${pct(v)}  ${k}`),
  ].join('\n');
}

function postgresCpuMs(): number {
  // Our embedded server's processes run as OS user postgres and are children of this process's
  // postmaster; summing every process named postgres under us is enough here.
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid || postmasterPid === ppid || Number(entry) === postmasterPid)
        total += processCpuMs(Number(entry));
    } catch {
      // gone
    }
  }
  return total;
}

let postmasterPid = 0;

function appRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(status.match(/VmRSS:\s+(\d+) kB/)?.[1] ?? Number.NaN) / 1024);
}

async function main(): Promise<void> {
  const scenarios = (process.argv[2] ?? 'get').split(',');
  if (process.argv[3]) {
    process.stdout.write(`${summarise(process.argv[3])}\n`);
    return;
  }
  const profiling = process.env.PROFILE !== '0';
  /** The app's CPU per request in the last scenario, the one the profile's last seconds show. */
  let lastPerRequest: number | undefined;
  // Requests in flight: 1 shows the cost of a request met alone, as at a moderate rate.
  const concurrency = Number(process.env.PROFILE_CONCURRENCY ?? 4);
  const { freePort, startApp } = await import('@/test/support/app');
  const dataDir = path.resolve('.bench-data', `profile-${process.pid}`);
  const profileDir = path.resolve('bench/results/profiles', `${scenarios.join('-')}-${Date.now()}`);
  mkdirSync(profileDir, { recursive: true });
  const sqlStats = process.env.PROFILE_SQL === '1';
  const pg = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    database: 'postgres',
    tcp: true,
    settings: sqlStats ? STATEMENT_STATS_SETTINGS : {},
  });
  postmasterPid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  try {
    const ds = await seedDataset(pg.tcpUrl, 'vouch_profile', Number(process.env.PROFILE_CASES ?? 10_000));
    const app = await startApp({
      // Another checkout's build (a `git worktree` of an earlier commit, as bench/ab.ts takes).
      cwd: process.env.PROFILE_TREE ? path.resolve(process.env.PROFILE_TREE) : undefined,
      databaseUrl: ds.url,
      env: {
        RATE_LIMIT_READ_PER_MINUTE: '100000000',
        RATE_LIMIT_WRITE_PER_MINUTE: '100000000',
        ...(profiling ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
      },
    });
    try {
      process.stdout.write(`      app RSS ${appRssMb(app.process.pid as number)} MB at start\n`);
      for (const scenario of scenarios) {
        const target = scenarioTarget(scenario, ds, `p${Date.now().toString(36)}`);
        const endpoint = { host: '127.0.0.1', port: app.port };
        await closedLoop({ endpoint, concurrency, warmupMs: 0, durationMs: 2000, target });
        if (sqlStats) await resetStatementStats(ds.url);
        const appBefore = processCpu(app.process.pid as number);
        const pgBefore = postgresCpuMs();
        const result = await closedLoop({ endpoint, concurrency, warmupMs: 0, durationMs: 8000, target });
        const appCpu = (before: { total: number; kernel: number }) => {
          const after = processCpu(app.process.pid as number);
          const total = after.total - before.total;
          const kernel = after.kernel - before.kernel;
          return `${(total / n).toFixed(2)} ms/req (${((100 * kernel) / total).toFixed(0)} % kernel)`;
        };
        const n = result.sent;
        lastPerRequest = (processCpu(app.process.pid as number).total - appBefore.total) / n;
        process.stdout.write(
          `${scenario.padEnd(5)} ${result.throughput.toFixed(0).padStart(5)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  app ${appCpu(appBefore)}  pg ${((postgresCpuMs() - pgBefore) / n).toFixed(2)} ms/req  errors ${result.errors} ${result.errorSamples.join(' | ')}\n`,
        );
        if (sqlStats) process.stdout.write(`${await statementStats(ds.url, n)}\n`);
        process.stdout.write(`      app RSS ${appRssMb(app.process.pid as number)} MB after ${scenario}\n`);
      }
    } finally {
      await app.stop();
    }
    const [file] = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
    if (file) {
      process.stdout.write(`${summarise(path.join(profileDir, file), 10, undefined, lastPerRequest)}\n`);
    }
  } finally {
    await pg.stop();
    deleteEmbeddedData(dataDir);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

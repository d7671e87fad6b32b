/**
 * `npm run bench:pages`: the subject's verification page on this machine, with the load
 * generator, the browser, one app process (`next start`) and PostgreSQL all on the same host.
 *
 * - latency of GET /v/<public_id> at a steady open-loop 50 requests/s (target: p95 < 50 ms), over
 *   200 cases that ask for SMS, custom question and ID + selfie (the heaviest page);
 * - the JavaScript the page loads, gzipped (target: < 80 KB);
 * - largest contentful paint in Chromium, cold cache, phone viewport (target: < 1 s).
 *
 * It reports; it does not fail on a missed target. Environment: BENCH_SECONDS (measured window,
 * default 20), BENCH_REBUILD=1 (rebuild even if a build exists in .next-bench-pages).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import postgres from 'postgres';
import { hashingAnswers } from '@/server/verification/methods/custom-question/answer';
import { openLoop } from './load';
import { treeCpuMs } from './process-cpu';

const DIST_DIR = '.next-bench-pages';
process.env.NEXT_DIST_DIR = DIST_DIR;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const RATE = 50;
const CASES = 200;
const LCP_RUNS = 7;

const log = (message: string) =>
  process.stderr.write(`[bench:pages ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const cleanups: Array<() => Promise<void> | void> = [];

async function run(command: string, args: string[]): Promise<void> {
  const child = spawn(process.execPath, [path.resolve(command), ...args], {
    env: { ...process.env, NEXT_DIST_DIR: DIST_DIR },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (c) => {
    errors += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${code}):\n${errors}`);
}

async function startDatabaseServer(): Promise<string> {
  mkdirSync('.test-data', { recursive: true });
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/setup/database-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`database server exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        resolve((JSON.parse(line) as { adminUrl: string }).adminUrl);
      } catch {
        // not the ready line
      }
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  if (process.env.BENCH_REBUILD === '1' || !existsSync(path.join(DIST_DIR, 'BUILD_ID'))) {
    log(`building into ${DIST_DIR}`);
    await run('node_modules/next/dist/bin/next', ['build']);
  }

  log('starting PostgreSQL');
  const adminUrl = await startDatabaseServer();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe('create database vouch_bench_pages');
  await admin.end();
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, '/vouch_bench_pages');

  const { connectDatabase, migrateDatabase } = await import('@/db/client');
  const { createTeam } = await import('@/server/teams/manage-teams');
  const { createCase, prepareCase, teamCaseSources } = await import('@/server/application/cases/create-case');
  const { systemClock } = await import('@/server/platform/clock');
  const { startJobQueue } = await import('@/server/platform/jobs/job-queue');
  const { jobProducer } = await import('@/server/platform/jobs/producers');
  const { startApp } = await import('@/test/support/app');
  await migrateDatabase(databaseUrl);
  // A producer-only queue, as a web process has: the seeded cases' events queue their jobs here.
  const queueStops: Array<() => Promise<void>> = [];
  const queue = await startJobQueue(
    { databaseUrl, onShutdown: (stop) => queueStops.push(stop) },
    { workers: false, webhookTimeoutMs: 10_000 },
  );

  log(`seeding ${CASES} cases`);
  const database = connectDatabase(databaseUrl, { max: 4 });
  const { team } = await createTeam(
    database.db,
    { name: 'Bench Industries', adminEmail: 'admin@bench.test', planCode: 'enterprise' },
    systemClock,
  );
  const prepared = await prepareCase(
    {
      subject_email: 'subject@bench.test',
      verification_methods: { sms: true, government_id: true, custom_question: true },
      custom_question_text: 'What is the name of your first team lead?',
      custom_question_answer: 'Alex',
      notes: '',
    },
    teamCaseSources(database.db, { teamId: team.id, livemode: true }),
    hashingAnswers((task) => task()),
  );
  const publicIds: string[] = [];
  for (let i = 0; i < CASES; i++) {
    const record = await database.db.transaction((tx) =>
      createCase(tx, { teamId: team.id, livemode: true }, prepared, {
        clock: systemClock,
        jobs: jobProducer(queue),
        caseTtlSeconds: 172800,
        // The pages are read by public id from the app started below; no mailed link is followed.
        pageBase: 'http://localhost',
        defaultLocale: 'en',
      }),
    );
    publicIds.push(record.publicId);
  }
  for (const stop of queueStops) await stop();
  await database.close();

  log('starting the app');
  const app = await startApp({ databaseUrl, env: { LOG_LEVEL: 'error' } });
  cleanups.unshift(() => app.stop());
  const url = new URL(app.baseUrl);

  // Every page once, so the measurement starts on a warm process (JIT, connection pool).
  for (const id of publicIds) await fetch(`${app.baseUrl}/v/${id}`).then((r) => r.text());

  log(`latency: GET /v/<public_id> at ${RATE}/s for ${SECONDS} s`);
  const appPid = app.process.pid ?? 0;
  const loadBefore = loadavg()[0] ?? 0;
  const cpuBefore = treeCpuMs(appPid);
  const load = await openLoop({
    endpoint: { host: '127.0.0.1', port: Number(url.port) },
    rate: RATE,
    warmupMs: 3000,
    durationMs: SECONDS * 1000,
    target: (i) => ({
      method: 'GET',
      path: `/v/${publicIds[i % publicIds.length]}`,
      headers: { host: url.host, 'accept-encoding': 'gzip' },
    }),
  });

  // The app's own CPU per request: unlike latency, it does not depend on what else the machine runs.
  const cpuPerRequest = (treeCpuMs(appPid) - cpuBefore) / Math.max(1, load.sent + (3000 * RATE) / 1000);
  const loadAfter = loadavg()[0] ?? 0;

  log('page weight');
  const pageUrl = `${app.baseUrl}/v/${publicIds[0]}`;
  const htmlText = await (await fetch(pageUrl)).text();
  const scripts = [...htmlText.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1] as string);
  let jsRaw = 0;
  let jsGzip = 0;
  for (const src of scripts) {
    const body = Buffer.from(await (await fetch(new URL(src, app.baseUrl))).arrayBuffer());
    jsRaw += body.length;
    jsGzip += gzipSync(body, { level: 9 }).length;
  }
  const inlineScripts = [...htmlText.matchAll(/<script(?![^>]*\ssrc=)[^>]*>/g)].length;
  const htmlGzip = gzipSync(Buffer.from(htmlText), { level: 9 }).length;

  log(`largest contentful paint: ${LCP_RUNS} cold loads in Chromium (phone viewport)`);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const lcps: number[] = [];
  try {
    // The browser's own first-start costs (profile, GPU process, font cache) are not the page's:
    // one throwaway load first, then every counted load in a fresh context (cold HTTP cache).
    const warm = await browser.newContext();
    await (await warm.newPage()).goto(`${app.baseUrl}/v/AAAAAAAAAAAAAAAA`);
    await warm.close();
    for (let i = 0; i < LCP_RUNS; i++) {
      const context = await browser.newContext({
        viewport: { width: 412, height: 915 },
        deviceScaleFactor: 2.6,
        isMobile: true,
      });
      const page = await context.newPage();
      await page.goto(`${app.baseUrl}/v/${publicIds[(i * 7) % publicIds.length]}`, { waitUntil: 'load' });
      const lcp = await page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            new PerformanceObserver((list) => {
              const entries = list.getEntries();
              resolve(entries[entries.length - 1]?.startTime ?? Number.NaN);
            }).observe({ type: 'largest-contentful-paint', buffered: true });
          }),
      );
      lcps.push(lcp);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  lcps.sort((a, b) => a - b);

  const figures = {
    machine: { cores: cpus().length, load_average_1m_before: loadBefore, load_average_1m_after: loadAfter },
    app_cpu_ms_per_request: cpuPerRequest,
    latency_ms: {
      rate_per_s: RATE,
      seconds: SECONDS,
      sent: load.sent,
      errors: load.errors,
      p50: load.p50,
      p95: load.p95,
      p99: load.p99,
      max: load.max,
    },
    javascript: {
      scripts: scripts.length,
      inline_scripts: inlineScripts,
      raw_bytes: jsRaw,
      gzip_bytes: jsGzip,
    },
    html: { raw_bytes: Buffer.byteLength(htmlText), gzip_bytes: htmlGzip },
    lcp_ms: { runs: lcps.length, median: percentile(lcps, 50), max: lcps[lcps.length - 1] ?? Number.NaN },
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/pages.json', `${JSON.stringify(figures, null, 2)}\n`);

  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rows = [
    [
      'GET /v/<public_id> p95 at 50/s',
      `${load.p95.toFixed(1)} ms (p50 ${load.p50.toFixed(1)}, p99 ${load.p99.toFixed(1)}, max ${load.max.toFixed(1)}; ${load.sent} requests, ${load.errors} errors)`,
      '< 50 ms',
      verdict(load.p95 < 50 && load.errors === 0),
    ],
    ['app CPU per page request', `${cpuPerRequest.toFixed(2)} ms (next-server, user + system)`, '', ''],
    [
      'machine load (1 min average)',
      `${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${cpus().length} cores`,
      '',
      '',
    ],
    [
      'page JavaScript, gzipped',
      `${(jsGzip / 1024).toFixed(2)} KB in ${scripts.length} file(s), ${inlineScripts} inline (raw ${(jsRaw / 1024).toFixed(2)} KB)`,
      '< 80 KB',
      verdict(jsGzip < 80 * 1024),
    ],
    ['page HTML, gzipped', `${(htmlGzip / 1024).toFixed(2)} KB`, '', ''],
    [
      'LCP in Chromium (cold, phone)',
      `median ${figures.lcp_ms.median.toFixed(0)} ms, max ${figures.lcp_ms.max.toFixed(0)} ms over ${lcps.length} loads`,
      '< 1000 ms',
      verdict(figures.lcp_ms.max < 1000),
    ],
  ];
  const width = [0, 1, 2].map((c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  process.stdout.write('\nVerification page (bench:pages)\n');
  for (const r of rows)
    process.stdout.write(`  ${r.map((cell, c) => cell.padEnd(width[c] ?? 0)).join('  ')}\n`);
  process.stdout.write('\nFigures also in bench/results/pages.json\n');
}

main()
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => {});
  });

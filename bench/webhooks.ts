/**
 * `npm run bench:webhooks`: webhook delivery and case expiry on this machine, with PostgreSQL, the
 * built app as `npm start` runs it (the launcher, its web processes and its worker) and an HTTPS
 * receiver on 127.0.0.1 all on one host.
 *
 * 1. Under creation (after 5 s of unmeasured creation that warms the service up), for
 *    BENCH_SECONDS (default 20) each, every team with 3 endpoints for
 *    `case.created`: (a) one team creating 350 cases/s (an employer's hiring wave; target ≥ 1,000
 *    deliveries/s), then (b) cases created at the API's full rate (16 clients back to back, for 16
 *    teams; target ≥ 500/s): deliveries per second while creating, time from each POST being
 *    sent (so at or before its commit) to the receiver getting each delivery (target p99 < 1 s),
 *    and every delivery accounted for.
 * 2. Backlog: 20,000 events fanned out to 3 endpoints (60,000 deliveries), recorded through the
 *    outbox as fast as the bench can commit them; deliveries per second from the first commit to
 *    the last delivery received (target ≥ 1,500/s).
 * 3. Latency: 100 events/s for BENCH_LATENCY_SECONDS (default 20), 3 endpoints; time from each
 *    event's commit to the receiver getting it (targets p50 < 300 ms, p99 < 1 s).
 * 4. Expiry: 100,000 open cases reaching `expires_at` at the same instant; time until all are
 *    `expired` with their `case.expired` events recorded and their deliveries queued (target 60 s).
 *
 * Phases 2 and 3 record events through `recordEvents` (the same outbox function the app's case and
 * verification code calls), so the commit instant is known exactly. Only 127.0.0.1 is contacted.
 * Environment: BENCH_DATABASE_URL (else an embedded PostgreSQL under .bench-data/webhooks),
 * NEXT_DIST_DIR (default .next-bench-webhooks; built when older than the code), BENCH_SQL=1 (the
 * statements PostgreSQL spent its time on per case of phase 1b and per attempt of phase 2). It reports; it does not fail
 * on a missed target.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { eq, sql } from 'drizzle-orm';
import { defaultWebProcesses } from '@/processes/launcher-settings';
import type { ReceivedRequest } from '@/test/support/https-receiver';
import { benchDatabase } from './bench-database';
import { buildIfNeeded } from './build';
import type { LoadResult, Target } from './load';
import { resetStatementStats, STATEMENT_STATS_SETTINGS, statementStats } from './statement-stats';

process.env.NEXT_DIST_DIR ??= '.next-bench-webhooks';
process.env.LOG_LEVEL ??= 'warn';
const DIST_DIR = process.env.NEXT_DIST_DIR;
const THROUGHPUT_EVENTS = 20_000;
const ENDPOINTS = 3;
const LATENCY_RATE = 100;
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 20);
const CREATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** The unmeasured creation before phase 1 (see there). */
const WARM_UP_SECONDS = 5;
const CREATION_CLIENTS = 16;
const CREATION_TEAMS = 16;
/** One team's steady creation rate in phase 1a (issue 27). */
const ONE_TEAM_RATE = 350;
const EXPIRY_CASES = 100_000;
/** The embedded PostgreSQL used without BENCH_DATABASE_URL, kept between runs. */
const EMBEDDED_DIR = '.bench-data/webhooks';
const EMBEDDED_PORT = 54339;
/** BENCH_SQL=1: also print what PostgreSQL spent its time on per case of the 16 teams' phase. */
const STATEMENT_STATS = process.env.BENCH_SQL === '1' && !process.env.BENCH_DATABASE_URL;

const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const cleanups: Array<() => Promise<void>> = [];
async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
}
// Interrupted, it still stops the app and the database it started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup().finally(() => process.exit(130));
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const { cases, events, webhookDeliveries } = await import('@/db/schema');
  const { bootRuntime } = await import('@/server/platform/boot-runtime');
  const { shutdown } = await import('@/server/platform/runtime');
  const { recordEvents } = await import('@/server/platform/outbox/record-events');
  const { systemClock } = await import('@/server/platform/clock');
  const { createTeam, updateTeam } = await import('@/server/teams/manage-teams');
  const { startApp } = await import('@/test/support/app');
  const { apiClient } = await import('@/test/support/api-client');
  const { closedLoop, openLoop } = await import('./load');
  const { childNamed, treeCpuByRole, treeCpuMs, treeMemory } = await import('./process-cpu');
  const { makeCertificate, startReceiver } = await import('@/test/support/https-receiver');

  try {
    log(`app build in ${DIST_DIR}: ${await buildIfNeeded(DIST_DIR)}`);

    const { databaseUrl, appDatabaseUrl } = await benchDatabase(
      'webhooks',
      { dir: EMBEDDED_DIR, port: EMBEDDED_PORT, settings: STATEMENT_STATS ? STATEMENT_STATS_SETTINGS : {} },
      cleanups,
    );

    const certificate = makeCertificate();
    const receiver = await startReceiver(certificate);
    cleanups.push(receiver.close);
    const app = await startApp({
      // As `npm start` does, the app's processes reach an embedded server over its Unix socket.
      databaseUrl: appDatabaseUrl,
      script: 'launch',
      env: {
        NODE_EXTRA_CA_CERTS: certificate.certPath,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        RATE_LIMIT_READ_PER_MINUTE: '100000',
        RATE_LIMIT_WRITE_PER_MINUTE: '100000',
        // The benchmark's own build (test/support/app.ts read NEXT_DIST_DIR before this module set it).
        NEXT_DIST_DIR: DIST_DIR,
        // As many web processes as `npm start` runs beside its embedded database on this machine
        // (the launcher, handed a DATABASE_URL, cannot tell the server shares the machine).
        ...(process.env.BENCH_DATABASE_URL
          ? {}
          : { WEB_PROCESSES: String(defaultWebProcesses(availableParallelism(), true)) }),
      },
    });
    cleanups.push(app.stop);
    log(`app on ${app.baseUrl}, receiver on 127.0.0.1:${receiver.port}`);

    // This process's runtime, as a web process has it (a producer-only job queue): the bench
    // records events, the app delivers them.
    process.env.DATABASE_URL = databaseUrl;
    const { database, jobProducer: jobs } = await bootRuntime({ workers: false, migrate: false });
    cleanups.push(shutdown);

    // Several teams create at once, as in production: case creation takes its team's row lock
    // (billing), so one team's creations run one after another.
    const creators: Array<{ teamId: string; token: string }> = [];
    for (let t = 0; t < CREATION_TEAMS; t++) {
      const created = await createTeam(
        database.db,
        { name: `Bench ${t}`, adminEmail: `bench${t}@bench.test` },
        systemClock,
      );
      // Enterprise, active, with a large top-up balance: billing never refuses a bench POST.
      await updateTeam(database.db, created.team.id, {
        planCode: 'enterprise',
        subscriptionStatus: 'active',
        topupBalanceCents: 1_000_000_000,
      });
      const api = apiClient(app.baseUrl, created.key.token);
      for (let i = 0; i < ENDPOINTS; i++) {
        const res = await api.post('/v1/webhooks/endpoints/', {
          url: receiver.url(`/bench-${t}-${i}`),
          // One endpoint of the first team also takes case.expired: the expiry phase then queues
          // 100,000 deliveries.
          events:
            t === 0 && i === 0
              ? ['case.created', 'case.closed', 'case.expired']
              : ['case.created', 'case.closed'],
        });
        if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${res.text}`);
      }
      creators.push({ teamId: created.team.id, token: created.key.token });
    }
    const team = { id: creators[0]?.teamId as string };
    /** An event of phase 2 or 3, its `public_id` carrying the phase's tag (`deliveriesTagged`). */
    const eventInput = (tag: string, i: number) => ({
      scope: { teamId: team.id, livemode: true },
      type: 'case.closed' as const,
      now: new Date(),
      data: {
        case_id: crypto.randomUUID(),
        public_id: `${tag}${i}`,
        subject_email: `b${i}@bench.test`,
        status: 'closed',
        created_at: new Date().toISOString(),
      },
    });

    /**
     * What the receiver got for one phase's events, each phase's tagged with text of its own (in a
     * case's subject e-mail, in an event's `public_id`): an earlier phase's last deliveries (a retry,
     * a slow drain) can still arrive during the next, and must count for neither. Starts the phase
     * (the receiver forgets what came before); `unique()` takes in what arrived since it last looked.
     */
    const deliveriesTagged = (tag: string) => {
      receiver.received.length = 0;
      const own: ReceivedRequest[] = [];
      const ids = new Set<string>();
      let scanned = 0;
      return {
        own,
        /** Distinct deliveries (by their `x-service-delivery` id) received for the tag so far. */
        unique(): number {
          for (; scanned < receiver.received.length; scanned++) {
            const request = receiver.received[scanned] as ReceivedRequest;
            if (!request.body.includes(tag)) continue;
            own.push(request);
            ids.add(String(request.headers['x-service-delivery']));
          }
          return ids.size;
        },
      };
    };

    /**
     * Deliveries while cases are created through the API: `load` sends the POSTs (each case of
     * `tokenOf(i)`'s team, 3 endpoints each); measured are the deliveries received meanwhile, the
     * time from each POST being sent (so at or before its commit) to the receiver getting each of
     * its deliveries, and that every delivery arrives once.
     */
    const underCreation = async (
      label: string,
      tokenOf: (i: number) => string,
      load: (target: (i: number) => Target) => Promise<LoadResult>,
    ) => {
      log(`under creation: ${label}`);
      const run = Date.now().toString(36);
      const tag = `post-${run}-`;
      const deliveries = deliveriesTagged(tag);
      const postSentAt: number[] = [];
      const cpuBefore = cpuNow();
      const started = Date.now();
      const result = await load((i) => {
        postSentAt[i] = Date.now();
        return {
          method: 'POST',
          path: '/v1/cases/',
          headers: { authorization: `Bearer ${tokenOf(i)}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            subject_email: `${tag}${i}@bench.test`,
            verification_methods: { email: true },
          }),
        };
      });
      const ended = Date.now();
      const cpu = cpuSince(cpuBefore);
      // A POST whose client gave up (an open loop past what the service takes) is still served, and
      // its case commits after the phase: the cases are counted until their number holds for a second
      // and every one of them has its deliveries.
      const countCreated = async () => {
        const [row] = await database.sql<{ n: number }[]>`
          select count(*)::int as n from cases where subject_email like ${`${tag}%`}`;
        return row?.n ?? 0;
      };
      let created = await countCreated();
      let createdSince = Date.now();
      const drainDeadline = Date.now() + 120_000;
      while (Date.now() < drainDeadline) {
        await new Promise((r) => setTimeout(r, 100));
        const now = await countCreated();
        if (now !== created) [created, createdSince] = [now, Date.now()];
        else if (Date.now() - createdSince >= 1000 && deliveries.unique() >= created * ENDPOINTS) break;
      }
      const expected = created * ENDPOINTS;
      const unique = deliveries.unique();
      const own = deliveries.own;
      const deliveredMeanwhile = own.filter((r) => r.receivedAt <= ended).length;
      const drainedMs = Math.max(...own.map((r) => r.receivedAt)) - ended;
      const latencies = own
        .map((r) => {
          const email = String(
            (JSON.parse(r.body) as { data?: { subject_email?: string } }).data?.subject_email,
          );
          const index = Number(email.match(/^post-[a-z0-9]+-(\d+)@/)?.[1] ?? Number.NaN);
          return r.receivedAt - (postSentAt[index] ?? Number.NaN);
        })
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      const duplicates = own.length - unique;
      const seconds = (ended - started) / 1000;
      const line =
        `${created} cases in ${seconds.toFixed(1)} s through the API (${result.throughput.toFixed(0)} cases/s, ${label}, POST p99 ${result.p99.toFixed(0)} ms, ${result.errors} errors);` +
        ` ${deliveredMeanwhile} deliveries received meanwhile -> ${(deliveredMeanwhile / seconds).toFixed(0)} deliveries/s while creating;` +
        ` all ${expected} in by ${(drainedMs / 1000).toFixed(1)} s after the last POST; ${expected - unique} lost, ${duplicates} duplicate requests;` +
        ` POST sent -> receiver p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms (target p99 < 1000);` +
        ` CPU ${(cpu.total / (ended - started)).toFixed(2)} cores busy, per case ${[...cpu.byRole].map(([role, ms]) => `${role} ${(ms / Math.max(1, created)).toFixed(2)}`).join(', ')} ms`;
      return { line, created };
    };
    const endpoint = { host: '127.0.0.1', port: app.port };

    // Where a phase's CPU goes: the app's processes by role, PostgreSQL's, and this process's own
    // (the load generator and the HTTPS receiver).
    const postgresRoot = process.env.BENCH_DATABASE_URL ? null : childNamed('postgres');
    const cpuNow = () => {
      const byRole = treeCpuByRole(app.process.pid as number);
      if (postgresRoot) byRole.set('postgres', treeCpuMs(postgresRoot));
      const own = process.cpuUsage();
      byRole.set('bench (load + receiver)', (own.user + own.system) / 1000);
      return byRole;
    };
    const cpuSince = (before: Map<string, number>) => {
      const byRole = new Map<string, number>();
      for (const [role, ms] of cpuNow()) byRole.set(role, ms - (before.get(role) ?? 0));
      return { byRole, total: [...byRole.values()].reduce((sum, ms) => sum + ms, 0) };
    };

    // Cases created as fast as the API takes them, spread over the teams (the warm-up and 1b).
    const spreadOver = (label: string, seconds: number) =>
      underCreation(
        label,
        (i) => creators[i % CREATION_TEAMS]?.token ?? '',
        (target) =>
          closedLoop({
            endpoint,
            concurrency: CREATION_CLIENTS,
            warmupMs: 0,
            durationMs: seconds * 1000,
            target,
          }),
      );
    // 0. A freshly started service runs its first thousands of requests cold (V8 compiles the hot
    // paths as they run, the pools open their connections): a short unmeasured phase first, its
    // deliveries drained, so phase 1 measures the sustained rate the targets are about.
    log(`warm-up: ${CREATION_CLIENTS} clients for ${WARM_UP_SECONDS} s, not reported`);
    await spreadOver('warm-up', WARM_UP_SECONDS);
    // 1a. One team's hiring wave at a steady 350 cases/s (issue 27: >= 1,000 deliveries/s).
    const oneTeam = await underCreation(
      `one team at ${ONE_TEAM_RATE}/s, open loop`,
      () => creators[0]?.token ?? '',
      (target) =>
        openLoop({ endpoint, rate: ONE_TEAM_RATE, warmupMs: 0, durationMs: CREATION_SECONDS * 1000, target }),
    );
    // 1b. As many as the API takes, spread over the teams.
    if (STATEMENT_STATS) await resetStatementStats(databaseUrl);
    const spread = await spreadOver(
      `${CREATION_CLIENTS} clients for ${CREATION_TEAMS} teams, closed loop`,
      CREATION_SECONDS,
    );

    if (STATEMENT_STATS) {
      const perCase = await statementStats(databaseUrl, Math.max(1, spread.created));
      process.stdout.write(`\nPostgreSQL per case, 16 teams' phase:\n${perCase}\n`);
    }

    // 2. Backlog.
    log(`backlog: recording ${THROUGHPUT_EVENTS} events for ${ENDPOINTS} endpoints`);
    const backlogTag = `backlog-${Date.now().toString(36)}-`;
    const backlog = deliveriesTagged(backlogTag);
    const started = performance.now();
    const startedWall = Date.now();
    for (let i = 0; i < THROUGHPUT_EVENTS; i += 500) {
      await database.db.transaction((tx) =>
        recordEvents(
          tx,
          jobs,
          Array.from({ length: 500 }, (_, j) => eventInput(backlogTag, i + j)),
        ),
      );
    }
    const recordedMs = performance.now() - started;
    // From here to the last delivery only the app's worker works (the bench waits): the CPU of the
    // app's processes and of the whole PostgreSQL server meanwhile, over the deliveries received
    // meanwhile, is what one delivery attempt costs (claim, sign, POST, record; pg-boss's fetch
    // and completion).
    if (STATEMENT_STATS) await resetStatementStats(databaseUrl);
    const cpuAfterRecording = {
      app: treeCpuMs(app.process.pid as number),
      pg: postgresRoot ? treeCpuMs(postgresRoot) : Number.NaN,
      received: receiver.received.length,
    };
    const expected = THROUGHPUT_EVENTS * ENDPOINTS;
    const deadline = Date.now() + 600_000;
    let lastReport = Date.now();
    while (backlog.unique() < expected) {
      if (Date.now() > deadline)
        throw new Error(`only ${backlog.unique()} of ${expected} deliveries in 10 minutes`);
      if (Date.now() - lastReport > 10_000) {
        log(`  ${backlog.unique()} / ${expected} received`);
        lastReport = Date.now();
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const throughputMs = Math.max(...backlog.own.map((r) => r.receivedAt)) - startedWall;
    const attemptsMeasured = Math.max(1, receiver.received.length - cpuAfterRecording.received);
    const attemptCost = {
      app: (treeCpuMs(app.process.pid as number) - cpuAfterRecording.app) / attemptsMeasured,
      pg: postgresRoot ? (treeCpuMs(postgresRoot) - cpuAfterRecording.pg) / attemptsMeasured : Number.NaN,
    };
    if (STATEMENT_STATS) {
      const perAttempt = await statementStats(databaseUrl, attemptsMeasured);
      process.stdout.write(
        `\nPostgreSQL per delivery attempt, the backlog after its last commit:\n${perAttempt}\n`,
      );
    }
    // The backlog's own deliveries marked delivered (the phases before it left theirs in the table).
    const succeeded = await eventuallyCount(
      database,
      sql`select count(*)::int as n from ${webhookDeliveries} d join ${events} e on e.id = d.event_id
          where d.status = 'success' and e.data->>'public_id' like ${`${backlogTag}%`}`,
      expected,
    );
    const duplicates = backlog.own.length - backlog.unique();

    // 3. Latency at a steady rate.
    log(`latency: ${LATENCY_RATE} events/s for ${LATENCY_SECONDS} s`);
    const latencyTag = `latency-${Date.now().toString(36)}-`;
    const steady = deliveriesTagged(latencyTag);
    const committedAt = new Map<string, number>();
    const total = LATENCY_RATE * LATENCY_SECONDS;
    const t0 = Date.now();
    const inflight: Array<Promise<void>> = [];
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / LATENCY_RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(
        database.db
          .transaction((tx) => recordEvents(tx, jobs, [eventInput(latencyTag, i)]))
          .then(([event]) => {
            if (event) committedAt.set(event.envelope.id, Date.now());
          }),
      );
    }
    await Promise.all(inflight);
    while (steady.unique() < total * ENDPOINTS && Date.now() - t0 < (LATENCY_SECONDS + 60) * 1000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    steady.unique();
    const latencies = steady.own
      .map((r) => r.receivedAt - (committedAt.get(JSON.parse(r.body).id) ?? Number.NaN))
      .filter(Number.isFinite)
      .sort((a, b) => a - b);

    // 4. Expiry.
    log(`expiry: ${EXPIRY_CASES} cases expiring at once`);
    const expiresAt = new Date(Date.now() + 8000);
    await database.db.execute(sql`
      insert into cases (team_id, public_id, subject_email, created_at, expires_at)
      select ${team.id}, md5(random()::text || i), 'x' || i || '@bench.test', now(), ${expiresAt.toISOString()}::timestamptz
      from generate_series(1, ${EXPIRY_CASES}) i
    `);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt.getTime() - Date.now())));
    let expiredAfterMs = Number.NaN;
    for (;;) {
      const [open] = (await database.db.execute(
        sql`select count(*)::int as n from cases where team_id = ${team.id} and status = 'open' and subject_email like 'x%@bench.test'`,
      )) as unknown as Array<{ n: number }>;
      if (open?.n === 0) {
        expiredAfterMs = Date.now() - expiresAt.getTime();
        break;
      }
      if (Date.now() - expiresAt.getTime() > 180_000) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const [expiredEvents] = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(events)
      .where(eq(events.type, 'case.expired'));
    const [expiryDeliveries] = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventType, 'case.expired'));
    const [stillOpen] = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(cases)
      .where(
        sql`${cases.teamId} = ${team.id} and ${cases.status} = 'open' and ${cases.subjectEmail} like 'x%@bench.test'`,
      );

    // Every attempt that did not succeed, by cause: a dependable sender has none here, where the
    // receiver always answers 2xx, and each one costs its delivery a retry delay.
    const failures = await database.sql<{ why: string; n: number }[]>`
      select coalesce(error, 'HTTP ' || response_status) as why, count(*)::int as n
      from webhook_attempts
      where error is not null or response_status not between 200 and 299
      group by 1 order by 2 desc`;
    const failedAttempts = failures.reduce((sum, f) => sum + f.n, 0);

    const memory = treeMemory(app.process.pid as number);
    const totalRss = memory.reduce((sum, m) => sum + m.rssMb, 0);
    const rate = expected / (throughputMs / 1000);
    const lines = [
      '',
      'bench:webhooks (service, PostgreSQL and HTTPS receiver on this machine, 127.0.0.1 only)',
      `  machine      ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')} (1 / 5 / 15 min) at the end: other work on the machine slows every figure`,
      `  one team     ${oneTeam.line} (target >= 1,000 deliveries/s)`,
      `  16 teams     ${spread.line} (target >= 500 deliveries/s)`,
      `  backlog      ${THROUGHPUT_EVENTS} events x ${ENDPOINTS} endpoints = ${expected} deliveries in ${(throughputMs / 1000).toFixed(1)} s` +
        ` -> ${rate.toFixed(0)} deliveries/s (target >= 1,500); events recorded in ${(recordedMs / 1000).toFixed(1)} s;` +
        ` ${succeeded} marked success; ${duplicates} duplicate requests`,
      `  attempt      CPU per delivery attempt over the ${attemptsMeasured} after the last event's commit: app ${attemptCost.app.toFixed(3)} ms` +
        ` (target <= 0.4), PostgreSQL ${postgresRoot ? `${attemptCost.pg.toFixed(3)} ms` : 'not measured (BENCH_DATABASE_URL)'} (target <= 0.2)`,
      `  latency      ${LATENCY_RATE} events/s x ${LATENCY_SECONDS} s, ${ENDPOINTS} endpoints: ${steady.unique()} of ${total * ENDPOINTS} received;` +
        ` commit -> receiver p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms (targets p50 < 300, p99 < 1000)`,
      `  expiry       ${EXPIRY_CASES} cases expiring at once: all expired ${(expiredAfterMs / 1000).toFixed(1)} s after expires_at (target 60 s);` +
        ` ${expiredEvents?.n} case.expired events, ${expiryDeliveries?.n} deliveries queued, ${stillOpen?.n} still open`,
      `  memory       ${memory.map((m) => `${m.role} ${m.rssMb.toFixed(0)} MB`).join(', ')}; all together ${totalRss.toFixed(0)} MB (targets < 400 MB each, < 1 GB in all)`,
      `  failures     ${failedAttempts} failed attempts${failedAttempts ? `: ${failures.map((f) => `${f.n} x ${f.why}`).join('; ')}` : ''}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await cleanup();
  }
}

async function eventuallyCount(
  database: { db: { execute: (q: ReturnType<typeof sql>) => Promise<unknown> } },
  query: ReturnType<typeof sql>,
  expected: number,
): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [row] = (await database.db.execute(query)) as Array<{ n: number }>;
    if ((row?.n ?? 0) >= expected || Date.now() > deadline) return row?.n ?? 0;
    await new Promise((r) => setTimeout(r, 200));
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

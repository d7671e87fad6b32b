/**
 * `npm run bench:hashing`: does one team's storm of custom answers (scrypt, deliberately slow)
 * slow another team down? The shape of the attacker's third pass (issue 37, finding 2): the storm
 * team keeps four console import drafts of 500 answers each and six API batches of 100 (three of
 * them replays of earlier batches) in flight, round after round, for STORM_SECONDS (default 30),
 * while a quiet team creates one case at a time, each with a custom question, as a helpdesk
 * would (four a second at most: 240 answers a minute, within its own budget). Prints the quiet
 * team's latency (p50, p99, max) alone (the same-run reference) and under the storm, and what
 * became of the storm's requests. Target: the quiet create's p99 < 1 s.
 *
 * The service as `npm start` runs it (the launcher: web processes and a worker) on an embedded
 * PostgreSQL of its own (or BENCH_DATABASE_URL's server); it builds into NEXT_DIST_DIR (default
 * .next-bench-hashing) when that build is older than the sources.
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { benchDatabase } from './bench-database';
import { buildIfNeeded } from './build';

process.env.LOG_LEVEL ??= 'warn';
const DIST_DIR = process.env.NEXT_DIST_DIR || '.next-bench-hashing';
const STORM_SECONDS = Number(process.env.STORM_SECONDS ?? 30);
const REFERENCE_SECONDS = Number(process.env.REFERENCE_SECONDS ?? 10);
const QUIET_INTERVAL_MS = 250;

const log = (message: string) =>
  process.stderr.write(`[bench:hashing ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function summary(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms);
  return {
    creates: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.at(-1) ?? Number.NaN),
  };
}

async function main(): Promise<void> {
  log(`build ${DIST_DIR}: ${await buildIfNeeded(DIST_DIR)}`);
  const { freePort, startApp } = await import('@/test/support/app');
  const { apiClient } = await import('@/test/support/api-client');
  const { consoleClient, signInReplacingPassword } = await import('@/test/support/console-client');
  const { connectDatabase } = await import('@/db/client');
  const { createTeam, updateTeam } = await import('@/server/teams/manage-teams');
  const { systemClock } = await import('@/server/platform/clock');

  const cleanups: Array<() => Promise<void>> = [];
  try {
    const { databaseUrl, appDatabaseUrl } = await benchDatabase(
      'hashing',
      { dir: path.resolve('.bench-data', `hashing-${process.pid}`), port: await freePort() },
      cleanups,
    );
    const app = await startApp({
      databaseUrl: appDatabaseUrl,
      script: 'launch',
      env: { NEXT_DIST_DIR: DIST_DIR },
    });
    cleanups.push(app.stop);
    const database = connectDatabase(databaseUrl, { max: 2 });
    cleanups.push(database.close);

    const stormTeam = await createTeam(
      database.db,
      { name: 'Storm', adminEmail: 'owner@storm.test', planCode: 'enterprise' },
      systemClock,
    );
    const quietTeam = await createTeam(
      database.db,
      { name: 'Quiet', adminEmail: 'owner@quiet.test', planCode: 'enterprise' },
      systemClock,
    );
    // Budgets out of the way: what is measured is the hashing, not the request limits.
    for (const team of [stormTeam, quietTeam]) {
      await updateTeam(database.db, team.team.id, {
        rateLimitReadPerMinute: 100_000,
        rateLimitWritePerMinute: 100_000,
        topupBalanceCents: 1_000_000_000,
      });
    }
    const storm = apiClient(app.baseUrl, stormTeam.testKey.token);
    const quiet = apiClient(app.baseUrl, quietTeam.testKey.token);
    const owner = await signInReplacingPassword(
      consoleClient(app.baseUrl),
      'owner@storm.test',
      stormTeam.owner.oneTimePassword,
      'storm-owner-password-1',
    );
    owner.setCookie('vouch_mode', 'test');

    let created = 0;
    const quietCreate = async (): Promise<number> => {
      const started = performance.now();
      const res = await quiet.post('/v1/cases/', {
        subject_email: `helpdesk-${created++}@quiet.test`,
        verification_methods: { email: true, custom_question: true },
        custom_question_text: 'Which floor is your desk on?',
        custom_question_answer: 'Fourth',
      });
      if (res.status !== 201) throw new Error(`quiet create answered ${res.status}: ${res.text}`);
      return performance.now() - started;
    };
    // A busy helpdesk: a create every QUIET_INTERVAL_MS at most (four a second, 240 a minute),
    // within the team's own budget of hashed answers, so every refusal it meets is the storm's doing.
    const quietFor = async (seconds: number): Promise<number[]> => {
      const latencies: number[] = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        const latency = await quietCreate();
        latencies.push(latency);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, QUIET_INTERVAL_MS - latency)));
      }
      return latencies;
    };

    // Warm-up, then the reference: the quiet team alone.
    for (let i = 0; i < 5; i++) await quietCreate();
    log(`reference: the quiet team alone for ${REFERENCE_SECONDS} s`);
    const reference = summary(await quietFor(REFERENCE_SECONDS));
    log(`reference ${JSON.stringify(reference)}`);

    const answers = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({
        subject_email: `${prefix}-${i}@storm.test`,
        verification_methods: { custom_question: true },
        custom_question_text: 'Badge colour?',
        custom_question_answer: `Blue ${i}`,
      }));
    const draftCsv = (round: number, n: number) =>
      `email,methods,custom_question_text,custom_question_answer\n${Array.from({ length: n }, (_, i) => `d${round}-${i}@storm.test,custom_question,Badge colour?,Blue ${i}`).join('\n')}\n`;
    const outcomes: Record<string, number> = {};
    const count = (what: string) => {
      outcomes[what] = (outcomes[what] ?? 0) + 1;
    };
    let stormRunning = true;
    const stormLoop = async () => {
      let round = 0;
      while (stormRunning) {
        round += 1;
        const drafts = Array.from({ length: 4 }, (_, d) =>
          owner
            .mutate('console.imports.draft', {
              file_name: `wave-${round}-${d}.csv`,
              csv: draftCsv(round * 10 + d, 500),
              default_methods: ['custom_question'],
            })
            .then((res) => count(`draft ${res.status}`)),
        );
        // Three new batches and three replays of the round before's (the same key and body).
        const batches = Array.from({ length: 6 }, (_, b) => {
          const source = b < 3 ? round : round - 1;
          const key = `storm-${source}-${b % 3}`;
          return storm
            .post('/v1/cases/batch/', { cases: answers(100, key) }, { 'Idempotency-Key': key })
            .then((res) =>
              count(`batch ${res.status}${res.headers.get('idempotent-replayed') ? ' replay' : ''}`),
            );
        });
        await Promise.all([...drafts, ...batches]);
      }
    };
    const stormFailed = (error: unknown) => count(`failed: ${String(error)}`);
    log(`storm: 4 drafts of 500 answers and 6 batches of 100 at a time, for ${STORM_SECONDS} s`);
    const stormDone = stormLoop().catch(stormFailed);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const underStorm = summary(await quietFor(STORM_SECONDS));
    stormRunning = false;
    await stormDone;
    log(`under the storm ${JSON.stringify(underStorm)}`);

    const result = {
      bench: 'hashing',
      at: new Date().toISOString(),
      cores: cpus().length,
      load_at_end: loadavg().map((l) => Number(l.toFixed(1))),
      quiet_team_alone: reference,
      quiet_team_under_storm: underStorm,
      target_p99_ms: 1000,
      storm_requests: outcomes,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(String(error instanceof Error ? (error.stack ?? error.message) : error));
    process.exit(1);
  },
);

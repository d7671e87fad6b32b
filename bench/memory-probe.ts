/**
 * A quick memory probe for tuning (not a published benchmark): `npm start`'s shape on a fresh
 * database, 15 s of single creates (16 connections, one team), 10 s of gets and lists, then the
 * RSS of each process at once and 10 s later. PROBE_ENV='A=1 B=2' passes settings to the launcher.
 */
import postgres from 'postgres';
import { buildIfNeeded } from './build';

process.env.NEXT_DIST_DIR ??= '.next-bench-import';
const log = (m: string) => process.stderr.write(`[probe] ${m}\n`);

async function main() {
  const { migrateDatabase } = await import('@/db/client');
  const { systemClock } = await import('@/server/platform/clock');
  const { connectDatabase } = await import('@/db/client');
  const { createTeam, updateTeam } = await import('@/server/teams/manage-teams');
  const { startApp } = await import('@/test/support/app');
  const { closedLoop } = await import('./load');
  const { treeMemory } = await import('./process-cpu');
  await buildIfNeeded(process.env.NEXT_DIST_DIR as string);
  const adminUrl = process.env.BENCH_DATABASE_URL as string;
  const name = `vouch_probe_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await migrateDatabase(url.toString());
  const env = Object.fromEntries(
    (process.env.PROBE_ENV ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => kv.split('=') as [string, string]),
  );
  const app = await startApp({
    databaseUrl: url.toString(),
    script: 'launch',
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000000', RATE_LIMIT_WRITE_PER_MINUTE: '100000000', ...env },
  });
  const database = connectDatabase(url.toString(), { max: 2 });
  const created = await createTeam(database.db, { name: 'Probe', adminEmail: 'p@probe.test' }, systemClock);
  await updateTeam(database.db, created.team.id, {
    planCode: 'enterprise',
    subscriptionStatus: 'active',
    topupBalanceCents: 1_000_000_000,
  });
  const headers = { authorization: `Bearer ${created.key.token}`, 'content-type': 'application/json' };
  const endpoint = { host: '127.0.0.1', port: app.port };
  const ids: string[] = [];
  const post = await closedLoop({
    endpoint,
    concurrency: 16,
    warmupMs: 1000,
    durationMs: 15_000,
    target: (i) => ({
      method: 'POST',
      path: '/v1/cases/',
      headers,
      body: JSON.stringify({ subject_email: `p${i}@probe.test`, verification_methods: { email: true } }),
    }),
  });
  const rows = await database.sql<{ id: string }[]>`select id from cases limit 1000`;
  for (const r of rows) ids.push(r.id);
  const get = await closedLoop({
    endpoint,
    concurrency: 16,
    warmupMs: 0,
    durationMs: 10_000,
    target: (i) =>
      i % 2
        ? { method: 'GET', path: `/v1/cases/${ids[i % ids.length]}/`, headers }
        : { method: 'GET', path: '/v1/cases/?status=open', headers },
  });
  const show = (label: string) => {
    const memory = treeMemory(app.process.pid as number);
    log(
      `${label}: ${memory.map((m) => `${m.role} ${m.rssMb.toFixed(0)}`).join(', ')}; total ${memory
        .reduce((s, m) => s + m.rssMb, 0)
        .toFixed(0)} MB`,
    );
  };
  log(
    `post ${post.throughput.toFixed(0)}/s p99 ${post.p99.toFixed(0)}; get/list ${get.throughput.toFixed(0)}/s p99 ${get.p99.toFixed(0)}`,
  );
  show('at the end');
  await new Promise((r) => setTimeout(r, 10_000));
  show('10 s later');
  await app.stop();
  await database.close();
  await admin.unsafe(`drop database ${name} with (force)`);
  await admin.end();
}
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

/**
 * `npm run bench:import`: one employer's hiring wave imported from the console, on this machine,
 * with PostgreSQL, the built app as `npm start` runs it (the launcher, its web processes and its
 * worker) and a real SMTP server on 127.0.0.1 all on one host.
 *
 * A 5,000-row CSV (BENCH_IMPORT_ROWS) is checked and confirmed through the same use cases the
 * console calls (draftCaseImport, startCaseImport: the job is queued in this process, as a web
 * process queues it), and the app's worker runs it. Measures the upload's check, the run from
 * confirmation to the import's end (target < 30 s), and the subject mails' departure (every one
 * accepted by the SMTP server within 60 s of the import's end), then the memory of the app's
 * processes. Environment: BENCH_DATABASE_URL (else an embedded PostgreSQL under
 * .bench-data/import), NEXT_DIST_DIR (default .next-bench-import). It reports; it does not fail on
 * a missed target.
 */
import { cpus, loadavg } from 'node:os';
import { benchDatabase } from './bench-database';
import { buildIfNeeded } from './build';

process.env.NEXT_DIST_DIR ??= '.next-bench-import';
process.env.LOG_LEVEL ??= 'warn';
const DIST_DIR = process.env.NEXT_DIST_DIR;
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 5_000);
const EMBEDDED_DIR = '.bench-data/import';
const EMBEDDED_PORT = 54341;

const log = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const cleanups: Array<() => Promise<void>> = [];
async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup().finally(() => process.exit(130));
  });
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const { bootRuntime } = await import('@/server/platform/boot-runtime');
  const { shutdown } = await import('@/server/platform/runtime');
  const { systemClock } = await import('@/server/platform/clock');
  const { createTeam, updateTeam } = await import('@/server/teams/manage-teams');
  const { draftCaseImport } = await import('@/server/application/case-imports/draft-case-import');
  const { startCaseImport } = await import('@/server/application/case-imports/change-case-import');
  const { describeZodError } = await import('@/server/api/validation-messages');
  const { startApp } = await import('@/test/support/app');
  const { startSmtpSink } = await import('@/test/support/smtp-sink');
  const { treeMemory } = await import('./process-cpu');

  try {
    log(`app build in ${DIST_DIR}: ${await buildIfNeeded(DIST_DIR)}`);
    const { databaseUrl, appDatabaseUrl } = await benchDatabase(
      'import',
      { dir: EMBEDDED_DIR, port: EMBEDDED_PORT },
      cleanups,
    );

    const smtp = await startSmtpSink();
    cleanups.push(smtp.close);
    const app = await startApp({
      databaseUrl: appDatabaseUrl,
      script: 'launch',
      env: { SMTP_URL: smtp.url },
    });
    cleanups.push(app.stop);
    log(`app on ${app.baseUrl}, SMTP on ${smtp.url}`);

    process.env.DATABASE_URL = databaseUrl;
    const { database, jobProducer: jobs, env } = await bootRuntime({ workers: false, migrate: false });
    cleanups.push(shutdown);
    const created = await createTeam(
      database.db,
      { name: 'Hiring wave', adminEmail: 'hr@wave.test' },
      systemClock,
    );
    // Enterprise, active, with a large top-up balance: billing never refuses a row.
    await updateTeam(database.db, created.team.id, {
      planCode: 'enterprise',
      subscriptionStatus: 'active',
      topupBalanceCents: 1_000_000_000,
    });
    const ctx = {
      db: database.db,
      teamId: created.team.id,
      scope: { teamId: created.team.id, livemode: true },
      actor: { userId: null, email: 'hr@wave.test', ipAddress: '127.0.0.1', userAgent: 'bench' },
      clock: systemClock,
      jobs,
      env,
    };
    const csv = `email,name,methods\n${Array.from({ length: ROWS }, (_, n) => `hire-${n}@wave.test,Hire ${n},email`).join('\n')}\n`;

    const checkStarted = performance.now();
    const draft = await draftCaseImport(
      ctx,
      { fileName: 'wave.csv', csv, defaultMethods: ['email'] },
      describeZodError,
    );
    const checkMs = performance.now() - checkStarted;
    log(`checked ${draft.valid_rows} of ${draft.total_rows} rows in ${fmt(checkMs, 0)} ms`);

    const runStarted = performance.now();
    await startCaseImport(ctx, draft.id);
    const sql = database.sql;
    let importMs = Number.NaN;
    for (;;) {
      const [row] = await sql<{ status: string; created: number }[]>`
        select status, created_count as created from case_imports where id = ${draft.id}`;
      if (row?.status === 'succeeded' || row?.status === 'canceled') {
        importMs = performance.now() - runStarted;
        log(`import ${row.status}: ${row.created} cases in ${fmt(importMs / 1000, 2)} s`);
        break;
      }
      if (performance.now() - runStarted > 300_000) throw new Error('the import did not end in 5 minutes');
      await new Promise((r) => setTimeout(r, 50));
    }
    const importEnded = performance.now();
    let mailMs = Number.NaN;
    for (;;) {
      const mailed = smtp.mails.filter((mail) => mail.to.some((to) => to.endsWith('@wave.test'))).length;
      if (mailed >= ROWS) {
        mailMs = performance.now() - importEnded;
        log(`all ${mailed} subject mails accepted by SMTP ${fmt(mailMs / 1000, 2)} s after the import's end`);
        break;
      }
      if (performance.now() - importEnded > 300_000) throw new Error(`only ${mailed} mails in 5 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const memory = treeMemory(app.process.pid as number);
    const totalRss = memory.reduce((sum, m) => sum + m.rssMb, 0);

    const report = [
      '',
      `Vouch import benchmark — ${new Date().toISOString()} — ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at the end; app (npm start's launcher), PostgreSQL and SMTP server on one host`,
      `  check of ${ROWS} rows (draft)          ${fmt(checkMs, 0).padStart(7)} ms`,
      `  run, confirmation to end             ${fmt(importMs / 1000, 2).padStart(7)} s   (${fmt(ROWS / (importMs / 1000), 0)} cases/s; target < 30 s)`,
      `  all subject mails sent after the end ${fmt(mailMs / 1000, 2).padStart(7)} s   (target < 60 s)`,
      `  memory after: ${memory.map((m) => `${m.role} ${fmt(m.rssMb, 0)} MB`).join(', ')}; total ${fmt(totalRss, 0)} MB`,
      '',
    ];
    process.stdout.write(report.join('\n'));
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    cleanup().finally(() => process.exit(1));
  },
);

/**
 * Health as an orchestrator probes it, through the real processes: `/livez` (never the database)
 * and `/readyz` (`ready`, or `unready` with coarse reasons) on a web process's PORT and a worker's
 * HEALTH_PORT; a release started with MIGRATE_ON_START=false waits for `vouch migrate`, unready
 * for `schema`, and serves once it ran; SIGTERM makes a web process unready at once while it keeps
 * serving for DRAIN_DELAY_SECONDS, then it stops. (The database outage's `database` reason is in
 * database-outage.test.ts, where PostgreSQL is stopped under load.)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startApp, startWorkerProcess } from '@/test/support/app';
import { createTestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { expectServerErrors, watchApp } from '@/test/support/openapi-conformance';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function answer(url: string) {
  const started = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers, ms: performance.now() - started };
}

/** An empty database (no schema at all), as a new release meets one before `vouch migrate`. */
async function emptyDatabase(): Promise<string> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `vouch_empty_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await dropper.unsafe(`drop database if exists ${name} with (force)`);
    await dropper.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `vouch migrate`'s work: the built one-shot migration against `databaseUrl`. */
function runMigration(databaseUrl: string): Promise<number | null> {
  // vitest sets BASE_URL to "/" in its workers; an operator's shell does not.
  const { BASE_URL: _vitestBaseUrl, ...inherited } = process.env;
  const child = spawn(process.execPath, [path.resolve('dist/processes/migrate.mjs')], {
    env: { ...inherited, NODE_ENV: 'production', DATABASE_URL: databaseUrl },
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.once('exit', resolve));
}

describe('a web process', () => {
  it('with MIGRATE_ON_START=false waits for the migration, unready for `schema`, then serves', async () => {
    // The 503s while it waits are what this test provokes.
    expectServerErrors();
    const databaseUrl = await emptyDatabase();
    const app = await startApp({
      databaseUrl,
      script: 'web',
      env: { MIGRATE_ON_START: 'false', LOG_LEVEL: 'info' },
      until: 'live',
    });
    cleanups.push(() => app.stop());

    await eventually(async () => (await answer(`${app.baseUrl}/readyz`)).status === 503, 20_000);
    const unready = await answer(`${app.baseUrl}/readyz`);
    expect(unready).toMatchObject({ status: 503, body: { status: 'unready', reasons: ['schema'] } });
    expect(unready.headers.get('cache-control')).toBe('no-store');
    expect(await answer(`${app.baseUrl}/livez`)).toMatchObject({ status: 200, body: { status: 'live' } });
    // Nothing else is served meanwhile, and nothing migrated the database.
    const ping = await answer(`${app.baseUrl}/v1/ping`);
    expect(ping).toMatchObject({ status: 503, body: { code: 'SERVICE_UNAVAILABLE' } });
    expect(ping.headers.get('retry-after')).toBe('1');
    const probe = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    cleanups.push(() => probe.end());
    const [tables] =
      await probe`select count(*)::int as n from information_schema.tables where table_schema = 'public'`;
    expect(tables?.n).toBe(0);
    expect(app.logs()).toContain('waiting for the database schema this release expects');

    expect(await runMigration(databaseUrl)).toBe(0);
    await eventually(async () => (await answer(`${app.baseUrl}/v1/ping`)).status === 200, 20_000);
    // Serving now: its answers are held to its document from here on.
    watchApp(app.baseUrl);
    expect(await answer(`${app.baseUrl}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await answer(`${app.baseUrl}/v1/ping`)).status).toBe(200);
  }, 90_000);

  it('on SIGTERM is unready at once, serves on for DRAIN_DELAY_SECONDS, then stops', async () => {
    // /readyz's 503 while draining is what this test provokes.
    expectServerErrors();
    const database = await createTestDatabase();
    cleanups.push(() => database.close());
    const app = await startApp({
      databaseUrl: database.url,
      script: 'web',
      env: { DRAIN_DELAY_SECONDS: '3', LOG_LEVEL: 'info' },
    });
    cleanups.push(() => app.stop());
    expect(await answer(`${app.baseUrl}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    // Only GET and HEAD, and only these two paths, are health.
    const head = await fetch(`${app.baseUrl}/readyz`, { method: 'HEAD' });
    expect(head.status).toBe(200);

    const exited = new Promise<number>((resolve) => app.process.once('exit', () => resolve(Date.now())));
    // Clients that keep asking over keep-alive connections through the whole stop, as a balancer's
    // last requests do: each gets a whole answer, or (once it stopped listening) a refused
    // connection; none is cut.
    const outcomes: Array<number | string> = [];
    const clients = Array.from({ length: 4 }, async () => {
      for (;;) {
        try {
          // /livez: a request nothing limits, so thousands of them are answered.
          const res = await fetch(`${app.baseUrl}/livez`);
          await res.text();
          outcomes.push(res.status);
        } catch (error) {
          const code = String((error as { cause?: { code?: string } }).cause?.code);
          outcomes.push(code);
          if (code === 'ECONNREFUSED') return;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    app.process.kill('SIGTERM');
    await eventually(async () => (await answer(`${app.baseUrl}/readyz`)).status === 503, 2_000);
    expect(await answer(`${app.baseUrl}/readyz`)).toMatchObject({
      status: 503,
      body: { status: 'unready', reasons: ['draining'] },
    });
    // Still serving while load balancers notice.
    for (let i = 0; i < 5; i++) {
      expect((await answer(`${app.baseUrl}/v1/ping`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(Date.now() - signalled).toBeLessThan(3_000);
    const stoppedAt = await exited;
    // It stopped after its delay, and within its drain time after that.
    expect(stoppedAt - signalled).toBeGreaterThanOrEqual(3_000);
    expect(stoppedAt - signalled).toBeLessThan(3_000 + 10_000);
    expect(app.logs()).toContain('draining: unready, still serving');
    await Promise.all(clients);
    expect(outcomes.filter((outcome) => outcome !== 200 && outcome !== 'ECONNREFUSED')).toEqual([]);
    expect(outcomes.filter((outcome) => outcome === 200).length).toBeGreaterThan(100);
  }, 90_000);
});

describe('a worker process', () => {
  it('answers /livez and /readyz on HEALTH_PORT, nothing else, and stops on SIGTERM', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.close());
    const worker = await startWorkerProcess({ databaseUrl: database.url });
    cleanups.push(() => worker.stop());
    const base = `http://127.0.0.1:${worker.healthPort}`;
    expect(await answer(`${base}/livez`)).toMatchObject({ status: 200, body: { status: 'live' } });
    expect(await answer(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await answer(`${base}/v1/ping`)).status).toBe(404);
    expect((await answer(`${base}/`)).status).toBe(404);
    const exited = new Promise((resolve) => worker.process.once('exit', resolve));
    worker.process.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);

  it('refuses to start, in one line, when HEALTH_PORT is taken', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.close());
    const first = await startWorkerProcess({ databaseUrl: database.url });
    cleanups.push(() => first.stop());
    await expect(
      startWorkerProcess({ databaseUrl: database.url, env: { HEALTH_PORT: String(first.healthPort) } }),
    ).rejects.toThrow(new RegExp(`HEALTH_PORT: cannot listen on ${first.healthPort} \\(EADDRINUSE\\)`));
  }, 90_000);
});

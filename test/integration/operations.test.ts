/**
 * Issue 12: what an operator relies on — an idempotency key held by a request that died is
 * released after 60 s; a bad configuration value stops start-up naming the variable; without
 * DATABASE_URL the app runs its own PostgreSQL and stops it with itself; VERIFY_URL_BASE is the
 * origin of every subject-facing link; the home page and /docs; the daily idempotency-purge
 * schedule.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, desc, eq, sql } from 'drizzle-orm';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteEmbeddedData, startEmbeddedPostgres } from '@/db/embedded';
import { idempotencyKeys, mailOutbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { freePort, processAlive, type RunningApp, serveCommandArguments, startApp } from '@/test/support/app';
import { consoleClient, runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { jobsOf } from '@/test/support/jobs';
import { latestSignInLink } from '@/test/support/sign-in-links';
import { openSubjectPage } from '@/test/support/subject-page';

let database: TestDatabase;
let app: RunningApp;
/** Where the subject's pages are served from: another origin than the API's. */
let verifyBase: string;
let teamId: string;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  verifyBase = `http://verify.localhost:${await freePort()}`;
  app = await startApp({ databaseUrl: database.url, env: { VERIFY_URL_BASE: verifyBase } });
  const { team, key } = await createTeam(
    database.db,
    { name: 'Operations', adminEmail: 'owner@operations.test', planCode: 'enterprise' },
    systemClock,
  );
  teamId = team.id;
  api = apiClient(app.baseUrl, key.token);
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

describe('idempotency keys', () => {
  it('a key held by a request that died is released after 60 s, not before', async () => {
    const body = { subject_email: 'idem@operations.test', verification_methods: { sms: true } };
    const headers = { 'Idempotency-Key': 'held-by-a-dead-request' };
    const first = await api.post<{ id: string }>('/v1/cases/', body, headers);
    expect(first.status).toBe(201);
    // As if that request had claimed the key and its process died before answering: no response
    // (nor the case it made) stored, the lock taken `seconds` ago.
    const holdSince = async (seconds: number) => {
      await database.db
        .update(idempotencyKeys)
        .set({
          responseBody: null,
          responseStatus: null,
          caseId: null,
          lockedAt: sql`now() - make_interval(secs => ${seconds})`,
        })
        .where(and(eq(idempotencyKeys.teamId, teamId), eq(idempotencyKeys.key, headers['Idempotency-Key'])));
    };

    await holdSince(55);
    const waiting = await api.post<{ code: string }>('/v1/cases/', body, headers);
    expect(waiting.status).toBe(409);
    expect(waiting.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(waiting.headers.get('retry-after')).toBe('1');

    await holdSince(61);
    const takenOver = await api.post<{ id: string }>('/v1/cases/', body, headers);
    expect(takenOver.status).toBe(201);
    expect(takenOver.headers.get('idempotent-replayed')).toBeNull();
    expect(takenOver.body.id).not.toBe(first.body.id);
    // The request that took the key over is now the one replayed.
    const replay = await api.post<{ id: string }>('/v1/cases/', body, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(takenOver.body.id);
  });
});

describe('configuration', () => {
  it.each([
    ['CASE_TTL_SECONDS', 'abc'],
    ['RATE_LIMIT_READ_PER_MINUTE', '-1'],
    ['TRUSTED_PROXIES', 'not-an-address'],
  ])(
    '%s=%s stops start-up with a message naming the variable',
    async (name, value) => {
      const started = startApp({ databaseUrl: database.url, env: { [name]: value } });
      const error = await started.then(
        async (running) => {
          await running.stop();
          return null;
        },
        (e: unknown) => e as Error,
      );
      expect(error, `the app started with ${name}=${value}`).not.toBeNull();
      expect(error?.message).toMatch(/^app exited with [1-9]\d*:/);
      expect(error?.message).toContain(name);
      expect(error?.message).toMatch(/refusing to start|Invalid configuration/);
    },
    90_000,
  );
});

describe('the embedded PostgreSQL', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'run as root, says which folder its postgres user cannot enter instead of crashing',
    async () => {
      const closed = mkdtempSync(path.join(tmpdir(), 'vouch-closed-'));
      try {
        chmodSync(closed, 0o700);
        await expect(
          startEmbeddedPostgres({ dataDir: path.join(closed, 'data'), port: await freePort() }),
        ).rejects.toThrow(`cannot enter ${closed} (only its owner may): move the checkout`);
        expect(existsSync(path.join(closed, 'data'))).toBe(false);
      } finally {
        rmSync(closed, { recursive: true, force: true });
      }
    },
  );

  function socketAnswers(dataDir: string, port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = createConnection({ path: path.join(dataDir, `.s.PGSQL.${port}`) });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  it('without DATABASE_URL the app runs its own PostgreSQL, serves from it, and stops it on SIGTERM', async () => {
    mkdirSync('.test-data', { recursive: true });
    const dataDir = mkdtempSync(path.resolve('.test-data', 'embedded-app-'));
    const pgPort = await freePort();
    const port = await freePort();
    const baseUrl = `http://localhost:${port}`;
    const embeddedEnv = { EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
      LOG_LEVEL: 'warn',
      ...embeddedEnv,
    };
    delete env.DATABASE_URL;
    let output = '';
    const child: ChildProcess = spawn(process.execPath, serveCommandArguments(), {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const pidFile = path.join(dataDir, 'postmaster.pid');
    try {
      // A first start runs initdb: slower than the usual start.
      const deadline = Date.now() + 150_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`app exited with ${child.exitCode}:\n${output}`);
        const ok = await fetch(`${baseUrl}/v1/ping`).then(
          (res) => res.ok,
          () => false,
        );
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`app did not answer:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(existsSync(pidFile)).toBe(true);
      const postgresPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      expect(processAlive(postgresPid)).toBe(true);
      expect(await socketAnswers(dataDir, pgPort)).toBe(true);

      // The CLI finds the same server through the same settings (and no DATABASE_URL).
      const team = await runCli(
        ['teams', 'create', '--name', 'Embedded', '--admin-email', 'owner@embedded.test'],
        { ...embeddedEnv, DATABASE_URL: '', BASE_URL: baseUrl },
      );
      const rest = apiClient(baseUrl, String(team.api_key));
      const created = await rest.post<{ id: string }>('/v1/cases/', {
        subject_email: 'jane@embedded.test',
        verification_methods: { sms: true },
      });
      expect(created.status, created.text).toBe(201);
      expect((await rest.get<{ id: string }>(`/v1/cases/${created.body.id}/`)).body.id).toBe(created.body.id);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(await socketAnswers(dataDir, pgPort)).toBe(false);
      expect(existsSync(pidFile)).toBe(false);
      expect(processAlive(postgresPid)).toBe(false);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      // A server the app failed to stop must not outlive the test.
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pid > 0 && processAlive(pid)) {
          process.kill(pid, 'SIGINT');
          const until = Date.now() + 15_000;
          while (processAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        }
      }
      deleteEmbeddedData(dataDir);
    }
  }, 240_000);
});

describe('VERIFY_URL_BASE', () => {
  it("is the origin of a case's verification_url and of the links mailed about it", async () => {
    expect(new URL(verifyBase).origin).not.toBe(new URL(app.baseUrl).origin);
    const created = await api.post<{ public_id: string; verification_url: string }>('/v1/cases/', {
      subject_email: 'subject@verify.test',
      verification_methods: { email: true, manager: true },
      manager_name: 'Maria Manager',
      manager_email: 'manager@verify.test',
    });
    expect(created.status).toBe(201);
    const { public_id } = created.body;
    expect(created.body.verification_url).toBe(`${verifyBase}/v/${public_id}`);
    const listed = await api.get<{ results: Array<{ verification_url: string }> }>(
      '/v1/cases/?subject_email=subject@verify.test',
    );
    expect(listed.body.results[0]?.verification_url).toBe(`${verifyBase}/v/${public_id}`);

    const linkIn = async (to: string) => {
      const [mail] = await database.db
        .select()
        .from(mailOutbox)
        .where(eq(mailOutbox.to, to))
        .orderBy(desc(mailOutbox.createdAt))
        .limit(1);
      return mail?.text.match(/https?:\/\/\S+\/v\/\S+/)?.[0] ?? '';
    };
    const emailLink = await linkIn('subject@verify.test');
    const managerLink = await linkIn('manager@verify.test');
    expect(emailLink.startsWith(`${verifyBase}/v/${public_id}/email/`)).toBe(true);
    expect(managerLink.startsWith(`${verifyBase}/v/${public_id}/manager/`)).toBe(true);

    // The pages behind those links accept their forms from that origin (a proxy serves it here).
    const onApp = (link: string) => `${app.baseUrl}${new URL(link).pathname}`;
    const confirmPage = await openSubjectPage(onApp(emailLink));
    expect(confirmPage.csrf).not.toBe('');
    const confirm = (origin: string) =>
      fetch(onApp(emailLink), {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Origin: origin,
          Cookie: confirmPage.cookie,
        },
        body: new URLSearchParams({ csrf: confirmPage.csrf }),
      });
    expect((await confirm('https://elsewhere.example')).headers.get('location')).toContain('n=form-expired');
    expect((await confirm(verifyBase)).headers.get('location')).toContain('n=email-verified');

    // The console stays on the API's origin: its sign-in links do not move.
    expect((await consoleClient(app.baseUrl).requestSignInLink('owner@operations.test')).status).toBe(200);
    const signIn = await latestSignInLink(database.db, 'owner@operations.test');
    expect(signIn.startsWith(`${app.baseUrl}/api/auth/magic-link/verify`)).toBe(true);
  });
});

describe('pages', () => {
  it('the home page names the service and links the reference', async () => {
    const res = await fetch(`${app.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = (await res.text()).replace(/<!-- -->/g, '');
    expect(html).toMatch(/<h1[^>]*>Vouch<\/h1>/);
    expect(html).toContain('href="/docs"');
    expect(html).toContain('href="/v1/openapi.json"');
  });

  it('/favicon.ico is an icon, not a 404 on every page', async () => {
    const res = await fetch(`${app.baseUrl}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)/);
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('/docs is the reference renderer, served from this origin under a policy without inline scripts', async () => {
    const res = await fetch(`${app.baseUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self';");
    expect(policy).not.toMatch(/unsafe-eval|unsafe-inline'[^;]*;.*script|https?:/);
    const html = await res.text();
    expect(html).toContain('<title>Vouch API reference</title>');
    const scripts = [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.map(([, , inline]) => inline)).toEqual(['', '']);
    const sources = scripts.map(([, attributes]) => /src="([^"]+)"/.exec(attributes ?? '')?.[1]);
    expect(sources).toEqual([
      expect.stringMatching(/^\/docs\/assets\/scalar-\d+\.\d+\.\d+\.js$/),
      expect.stringMatching(/^\/docs\/assets\/start-\d+\.\d+\.\d+\.js$/),
    ]);
    for (const source of sources) {
      const asset = await fetch(`${app.baseUrl}${source}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect((await asset.text()).length).toBeGreaterThan(10);
    }
    // The start-up points the renderer at our document and turns off everything that calls out.
    const start = await (await fetch(`${app.baseUrl}${sources[1]}`)).text();
    expect(start).toContain('"url":"/v1/openapi.json"');
    expect(start).toContain('"withDefaultFonts":false');
    expect(start).toContain('"telemetry":false');
    expect((await fetch(`${app.baseUrl}/docs/assets/other.js`)).status).toBe(404);
  });
});

describe('scheduled jobs', () => {
  it('runs the daily idempotency-purge and data-retention once in the UTC day, on no cron schedule', async () => {
    // Offered by the worker at start-up, one job each in today's slot (RETENTION_INTERVAL_SECONDS
    // is a day here); the cron schedules earlier versions kept would have run them a second time.
    const jobs = await eventually(async () => {
      const rows = await database.sql<{ name: string; slot: string; today: string }[]>`
        select name, to_char(singleton_on, 'YYYY-MM-DD HH24:MI:SS') as slot,
               to_char(date_trunc('day', now() at time zone 'utc'), 'YYYY-MM-DD HH24:MI:SS') as today
          from pgboss.job where name in ('data-retention', 'idempotency-purge') order by name`;
      return rows.length === 2 ? rows : undefined;
    });
    expect(jobs.map(({ name, slot, today }) => ({ name, today: slot === today }))).toEqual([
      { name: 'data-retention', today: true },
      { name: 'idempotency-purge', today: true },
    ]);
    expect(await database.sql`select name from pgboss.schedule`).toEqual([]);
  });

  it('the purge job deletes the keys past 30 days, through the app’s own worker', async () => {
    const { team } = await createTeam(
      database.db,
      { name: 'Purged', adminEmail: 'owner@purged.test' },
      systemClock,
    );
    const key = (name: string, daysAgo: number) => ({
      teamId: team.id,
      key: name,
      operation: 'cases.create',
      requestHash: 'h',
      responseStatus: 201,
      responseBody: {},
      createdAt: new Date(Date.now() - daysAgo * 86_400_000),
    });
    await database.db.insert(idempotencyKeys).values([key('old', 31), key('young', 29)]);
    // Another day's run of the purge, sent now.
    const boss = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false });
    await boss.start();
    let jobId: string | null;
    try {
      // The queue keeps one job waiting: once the day's run (queued at start-up) is taken, this one.
      jobId = await eventually(async () => (await boss.send(QUEUES.idempotencyPurge, {})) ?? undefined);
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
    expect(jobId).toEqual(expect.any(String));
    await expect
      .poll(
        async () => (await jobsOf(database, QUEUES.idempotencyPurge)).find((j) => j.id === jobId)?.state,
        {
          timeout: 20_000,
        },
      )
      .toBe('completed');
    const left = await database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.teamId, team.id));
    expect(left.map((row) => row.key)).toEqual(['young']);
  });
});

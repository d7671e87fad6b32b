/**
 * `npm run bench:passkey`: a returning person re-verified by passkey, against `npm start`'s shape
 * (the launcher's web and worker processes, an embedded PostgreSQL) with a webhook receiver over
 * HTTPS on the same machine.
 *
 * - In Chromium (Playwright, a CDP virtual authenticator, a phone's viewport): from opening the
 *   case's link to its `case.closed` arriving at the receiver, BENCH_BROWSER_RUNS times (default
 *   20). Target: p95 ≤ 3 s.
 * - Over HTTP, as the page's script does it (the page, the options, a software authenticator's
 *   answer), BENCH_CEREMONIES times one after another (default 200): the server's CPU per
 *   re-verification, the app's processes and PostgreSQL's together, from the page's request to the
 *   delivery of `case.closed`. Target: ≤ 50 ms.
 * - The page's passkey script, gzipped. Target: ≤ 8 KB.
 *
 * It reports; it does not fail on a missed target.
 */
import { availableParallelism } from 'node:os';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import { defaultWebProcesses } from '@/processes/launcher-settings';
import { addPlatformAuthenticator } from '@/test/support/virtual-authenticator';
import { benchDatabase } from './bench-database';
import { buildIfNeeded } from './build';
import { childNamed, treeCpuMs } from './process-cpu';

process.env.NEXT_DIST_DIR ??= '.next-bench-passkey';
const DIST_DIR = process.env.NEXT_DIST_DIR;
const BROWSER_RUNS = Number(process.env.BENCH_BROWSER_RUNS ?? 20);
const CEREMONIES = Number(process.env.BENCH_CEREMONIES ?? 200);
const EMBEDDED_DIR = '.bench-data/passkey';
const EMBEDDED_PORT = 54341;

const log = (message: string) =>
  process.stderr.write(`[bench:passkey ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const cleanups: Array<() => Promise<void>> = [];
async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup().finally(() => process.exit(130));
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const ms = (value: number) => `${Math.round(value)} ms`;

async function main(): Promise<void> {
  const { systemClock } = await import('@/server/platform/clock');
  const { createTeam } = await import('@/server/teams/manage-teams');
  const { connectDatabase } = await import('@/db/client');
  const { startApp } = await import('@/test/support/app');
  const { apiClient } = await import('@/test/support/api-client');
  const { makeCertificate, startReceiver } = await import('@/test/support/https-receiver');
  const { enrollPasskey } = await import('@/test/support/passkeys');
  const { relyingPartyOf } = await import('@/server/verification/methods/passkey/ceremonies');
  const { PASSKEY_SCRIPT_PATH } = await import('@/server/verification/methods/passkey/page-script');

  log(`app build in ${DIST_DIR}: ${await buildIfNeeded(DIST_DIR)}`);
  const { databaseUrl, appDatabaseUrl } = await benchDatabase(
    'passkey',
    { dir: EMBEDDED_DIR, port: EMBEDDED_PORT },
    cleanups,
  );
  const postmaster = process.env.BENCH_DATABASE_URL ? null : childNamed('postgres');
  const certificate = makeCertificate();
  const receiver = await startReceiver(certificate);
  cleanups.push(receiver.close);
  const app = await startApp({
    databaseUrl: appDatabaseUrl,
    script: 'launch',
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The bench opens its cases faster than a team's default write budget allows.
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
      NEXT_DIST_DIR: DIST_DIR,
      ...(process.env.BENCH_DATABASE_URL
        ? {}
        : { WEB_PROCESSES: String(defaultWebProcesses(availableParallelism(), true)) }),
    },
  });
  cleanups.push(app.stop);
  const database = connectDatabase(databaseUrl, { max: 2 });
  cleanups.push(() => database.close());

  const { team, testKey } = await createTeam(
    database.db,
    { name: 'Bench Desk', adminEmail: 'admin@bench-passkey.test' },
    systemClock,
  );
  const api = apiClient(app.baseUrl, testKey.token);
  const endpoint = await api.post('/v1/webhooks/endpoints/', {
    url: receiver.url('/closed'),
    events: ['case.closed'],
  });
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`);
  const party = relyingPartyOf(app.baseUrl);

  /** A person whose first case closed and saved a passkey: their address and the authenticator. */
  const returningPerson = async (email: string) => {
    const first = await api.post<{ id: string }>('/v1/cases/', {
      subject_email: email,
      verification_methods: { email: true },
    });
    await api.post(`/v1/cases/${first.body.id}/simulate/`, { action: 'complete_step', method: 'email' });
    const ceremony = { caseId: first.body.id, teamId: team.id, livemode: false, subjectEmail: email };
    return enrollPasskey(database.db, ceremony, systemClock, party);
  };
  const reverification = async (email: string) => {
    const created = await api.post<{ id: string; public_id: string; verification_url: string }>(
      '/v1/cases/',
      {
        subject_email: email,
        verification_methods: { passkey: true },
      },
    );
    if (created.status !== 201) throw new Error(`case: ${created.status} ${created.text}`);
    return created.body;
  };
  const closedDelivered = (caseId: string) => {
    const deadline = Date.now() + 30_000;
    return new Promise<number>((resolve, reject) => {
      const look = () => {
        const hit = receiver.received.find((r) => r.body.includes(caseId));
        if (hit) return resolve(hit.receivedAt);
        if (Date.now() > deadline) return reject(new Error(`no case.closed for ${caseId}`));
        setTimeout(look, 5);
      };
      look();
    });
  };

  // The page's script, as a phone downloads it.
  const script = Buffer.from(await (await fetch(`${app.baseUrl}${PASSKEY_SCRIPT_PATH}`)).arrayBuffer());
  const scriptGzipped = gzipSync(script, { level: 9 }).length;

  // Over HTTP, one after another: the server's CPU per re-verification.
  log(`${CEREMONIES} re-verifications over HTTP`);
  const person = await returningPerson('http@bench-passkey.test');
  const cases = [];
  for (let i = 0; i < CEREMONIES; i++) cases.push(await reverification('http@bench-passkey.test'));
  const serverCpu = () => treeCpuMs(app.process.pid ?? 0) + (postmaster ? treeCpuMs(postmaster) : 0);
  let ceremonyCpu = 0;
  const cpuBefore = { app: treeCpuMs(app.process.pid ?? 0), pg: postmaster ? treeCpuMs(postmaster) : 0 };
  const httpLatencies: number[] = [];
  for (const opened of cases) {
    const started = Date.now();
    const page = await fetch(opened.verification_url);
    const html = await page.text();
    const cookie = page.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const headers = {
      'Content-Type': 'application/json',
      'Sec-Fetch-Site': 'same-origin',
      Cookie: cookie,
      'X-CSRF-Token': html.match(/data-token="([^"]+)"/)?.[1] ?? '',
    };
    const base = `${app.baseUrl}/v/${opened.public_id}/passkey`;
    const ceremonyStarted = serverCpu();
    const options = (await (
      await fetch(`${base}/options`, { method: 'POST', headers, body: '{}' })
    ).json()) as {
      options: { challenge: string };
    };
    const response = person.authenticator.authenticate(options.options.challenge);
    const answer = (await (
      await fetch(`${base}/answer`, { method: 'POST', headers, body: JSON.stringify({ response }) })
    ).json()) as { result: string };
    if (answer.result !== 'verified') throw new Error(`answer: ${JSON.stringify(answer)}`);
    ceremonyCpu += serverCpu() - ceremonyStarted;
    httpLatencies.push((await closedDelivered(opened.id)) - started);
  }
  const cpuAfter = { app: treeCpuMs(app.process.pid ?? 0), pg: postmaster ? treeCpuMs(postmaster) : 0 };
  const appCpu = (cpuAfter.app - cpuBefore.app) / CEREMONIES;
  const pgCpu = (cpuAfter.pg - cpuBefore.pg) / CEREMONIES;

  // In Chromium, as the person's phone does it.
  log(`${BROWSER_RUNS} re-verifications in Chromium`);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  cleanups.push(() => browser.close());
  const browserLatencies: number[] = [];
  for (let i = 0; i < BROWSER_RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 412, height: 915 }, isMobile: true });
    const page = await context.newPage();
    const { cdp, authenticatorId } = await addPlatformAuthenticator(page);
    // The person's passkey lives in this phone's authenticator: saved on their first case's page.
    const email = `phone-${i}@bench-passkey.test`;
    const first = await api.post<{ id: string; verification_url: string }>('/v1/cases/', {
      subject_email: email,
      verification_methods: { email: true },
      offer_passkey: true,
    });
    await api.post(`/v1/cases/${first.body.id}/simulate/`, { action: 'complete_step', method: 'email' });
    await page.goto(first.body.verification_url);
    await page.getByRole('button', { name: 'Save a passkey' }).click();
    await page.locator('.passkey-saved').waitFor();
    const opened = await reverification(email);
    const started = Date.now();
    await page.goto(opened.verification_url);
    await page.getByRole('button', { name: 'Use my passkey' }).click();
    browserLatencies.push((await closedDelivered(opened.id)) - started);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    await context.close();
  }

  const http = httpLatencies.toSorted((a, b) => a - b);
  const inBrowser = browserLatencies.toSorted((a, b) => a - b);
  process.stdout.write(
    [
      'bench:passkey — a returning person re-verified by passkey',
      `  in Chromium, link opened → case.closed delivered (${BROWSER_RUNS} runs): p50 ${ms(percentile(inBrowser, 50))}, p95 ${ms(percentile(inBrowser, 95))} (target ≤ 3,000 ms)`,
      `  over HTTP, page → options → answer → case.closed delivered (${CEREMONIES}): p50 ${ms(percentile(http, 50))}, p95 ${ms(percentile(http, 95))}`,
      `  server CPU per re-verification, the page, the ceremony and case.closed delivered: ${appCpu.toFixed(1)} ms app + ${postmaster ? `${pgCpu.toFixed(1)} ms PostgreSQL` : 'PostgreSQL not measured (BENCH_DATABASE_URL)'} = ${(appCpu + pgCpu).toFixed(1)} ms`,
      `  of which the ceremony (options and answer, app and PostgreSQL): ${(ceremonyCpu / CEREMONIES).toFixed(1)} ms (target ≤ 50 ms)`,
      `  the page's passkey script: ${(script.length / 1024).toFixed(1)} KB, ${(scriptGzipped / 1024).toFixed(1)} KB gzipped (target ≤ 8 KB)`,
      '',
    ].join('\n'),
  );
}

// The embedded server's stop ends with a callback of its own that may throw once everything is
// stopped: the process exits as the other benches do, after the clean-up.
main()
  .finally(cleanup)
  .then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );

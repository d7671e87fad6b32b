import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, test as base, expect, type Page, type TestInfo } from '@playwright/test';
import { desc, eq } from 'drizzle-orm';
import postgres from 'postgres';
import { connectDatabase, type Database, migrateDatabase } from '../../db/client';
import { devMailbox } from '../../db/schema';
import { systemClock } from '../../server/platform/clock';
import { createTeam } from '../../server/teams/manage-teams';
import { type RunningApp, startApp } from '../../test/support/app';
import { runCli } from '../../test/support/console-client';
import {
  makeCertificate,
  type Receiver,
  startReceiver,
  webhookProblems,
} from '../../test/support/https-receiver';

/**
 * The console's own app for each worker: no SMTP (so mail lands in the dev mailbox the console
 * shows), deliveries allowed to a real HTTPS receiver on this machine, trusted through
 * NODE_EXTRA_CA_CERTS. It shares the run's PostgreSQL server when the global setup started one.
 */
async function adminDatabaseUrl(): Promise<{ url: string; child?: ChildProcess }> {
  const shared = process.env.E2E_DATABASE_URL;
  if (shared) return { url: shared.replace(/\/[^/]*$/, '/postgres') };
  mkdirSync('.test-data', { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/setup/database-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`database server exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        resolve((JSON.parse(line) as { adminUrl: string }).adminUrl);
      } catch {
        // not the ready line
      }
    });
  });
  return { url, child };
}

export interface NewTeam {
  team_id: string;
  api_key: string;
  test_api_key: string;
  admin_email: string;
  admin_password: string;
}

export interface ConsoleWorld {
  app: RunningApp;
  database: Database;
  receiver: Receiver;
  /** Through the operator's CLI, exactly as a newcomer gets their team. */
  createTeam: (name: string) => Promise<NewTeam>;
  /** The same in process (no CLI start-up), for the teams a test only needs to exist. */
  createTeamQuickly: (name: string) => Promise<NewTeam>;
  /** The link of the newest invitation the service mailed to `email` (dev mailbox). */
  invitationLinkFor: (email: string) => Promise<string>;
}

type WorkerFixtures = { world: ConsoleWorld };

export const test = base.extend<object, WorkerFixtures>({
  /**
   * Each test is its own client: its browser comes through this machine's proxy (the app trusts
   * loopback) from an address of its own, so one file's many sign-ins do not spend the next
   * test's share of the per-address sign-in limit.
   */
  extraHTTPHeaders: async ({ extraHTTPHeaders }, use) => {
    const client = `10.${[...randomBytes(3)].join('.')}`;
    await use({ ...extraHTTPHeaders, 'x-forwarded-for': client });
  },
  world: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
    async ({}, use) => {
      const admin = await adminDatabaseUrl();
      const name = `vouch_console_${randomBytes(4).toString('hex')}`;
      const sql = postgres(admin.url, { max: 1, onnotice: () => {} });
      await sql.unsafe(`create database ${name}`);
      await sql.end();
      const databaseUrl = admin.url.replace(/\/[^/]*$/, `/${name}`);
      await migrateDatabase(databaseUrl);
      const certificate = makeCertificate();
      const receiver = await startReceiver(certificate);
      const app = await startApp({
        databaseUrl,
        env: {
          SMTP_URL: '',
          TRUSTED_PROXIES: 'loopback',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          NODE_EXTRA_CA_CERTS: certificate.certPath,
          JOB_TICK_SECONDS: '1',
          MAIL_RETRY_DELAY_SECONDS: '1',
        },
      });
      const database = connectDatabase(databaseUrl, { max: 2 });
      let counter = 0;
      await use({
        app,
        database,
        receiver,
        createTeam: async (teamName) => {
          counter += 1;
          const email = `owner-${counter}-${randomBytes(3).toString('hex')}@${teamName.toLowerCase()}.test`;
          return (await runCli(['teams', 'create', '--name', teamName, '--admin-email', email], {
            DATABASE_URL: databaseUrl,
            BASE_URL: app.baseUrl,
          })) as unknown as NewTeam;
        },
        createTeamQuickly: async (teamName) => {
          const email = `owner-${randomBytes(3).toString('hex')}@${teamName.toLowerCase()}.test`;
          const created = await createTeam(database.db, { name: teamName, adminEmail: email }, systemClock);
          return {
            team_id: created.team.id,
            api_key: created.key.token,
            test_api_key: created.testKey.token,
            admin_email: email,
            admin_password: created.owner.oneTimePassword ?? '',
          };
        },
        invitationLinkFor: async (email) => {
          const deadline = Date.now() + 15_000;
          for (;;) {
            const [mail] = await database.db
              .select()
              .from(devMailbox)
              .where(eq(devMailbox.to, email))
              .orderBy(desc(devMailbox.createdAt))
              .limit(1);
            const link = mail?.text.match(/https?:\/\/\S+\/console\/invitation\?token=\S+/)?.[0];
            if (link) return link;
            if (Date.now() > deadline) throw new Error(`no invitation mailed to ${email}`);
            await new Promise((r) => setTimeout(r, 200));
          }
        },
      });
      await database.close();
      await app.stop();
      await receiver.close();
      expect(webhookProblems(receiver.received), 'webhooks that /v1/openapi.json does not describe').toEqual(
        [],
      );
      if (admin.child) admin.child.kill('SIGTERM');
    },
    { scope: 'worker', timeout: 120_000 },
  ],
});

export { expect };

/** axe on the page; `exclude` leaves parts out (the Branding preview's frames, which draw the subject's page). */
export async function expectAccessible(page: Page, exclude: readonly string[] = []): Promise<void> {
  const builder = new AxeBuilder({ page });
  for (const selector of exclude) builder.exclude(selector);
  const results = await builder.analyze();
  expect(
    results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  ).toEqual([]);
}

/** Signs in through the form; a new owner then replaces the CLI's one-time password. */
export async function signInAsNewOwner(page: Page, baseUrl: string, team: NewTeam, password: string) {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(team.admin_password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Choose your own password' })).toBeVisible();
  // The sign-in just proved the one-time password: the page does not ask for it again.
  await expect(page.getByLabel('One-time password')).toHaveCount(0);
  await expect(page.getByLabel('Current password')).toHaveCount(0);
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('New password again').fill(password);
  await page.getByRole('button', { name: 'Save password' }).click();
  await expect(page.getByRole('heading', { name: 'Usage and account' })).toBeVisible();
}

/**
 * A fresh browser (own cookies) in which someone without a console account opens an e-mailed
 * invitation to `team`, accepts it, and is signed in.
 */
export async function acceptInvitation(browser: Browser, link: string, team: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(link);
  await expect(page.getByRole('heading', { name: `Join ${team} on Vouch` })).toBeVisible();
  await expectAccessible(page);
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Usage and account' })).toBeVisible();
  return page;
}

/**
 * A full-page screenshot for judging a layout by eye: attached to the test (its output folder and
 * the report), and copied to E2E_SCREENSHOT_DIR when that is set, for a reviewer to open.
 */
export async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: 'image/png' });
  const dir = process.env.E2E_SCREENSHOT_DIR;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    copyFileSync(file, path.join(dir, `${name}.png`));
  }
}

/**
 * Issue 11, finding 4: stand-ins served live traffic silently, every viewer could read subjects'
 * links in the dev mailbox, and mail bodies, sign-in links and SMS codes were written to the log.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devMailbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser } from '@/test/support/invitations';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

const STAND_IN_WORDS = [/e-mail is not sent/, /text messages are not sent/, /identity checks are simulated/];

describe('VOUCH_ENV=production', () => {
  it('refuses to start while a stand-in would serve live traffic, naming each', async () => {
    const refused = startApp({ databaseUrl: database.url, env: { VOUCH_ENV: 'production' } });
    const error = await refused.then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/app exited with 1/);
    for (const words of STAND_IN_WORDS) expect(error?.message).toMatch(words);
  });

  it('refuses even one stand-in', async () => {
    const error = await startApp({
      databaseUrl: database.url,
      env: { VOUCH_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525', SMS_PROVIDER: 'dev' },
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/text messages are not sent/);
    expect(error?.message).not.toMatch(/e-mail is not sent/);
  });

  it('starts with a real mail server, SMS provider and identity provider configured, and its pages ignore ?lang=en-XA', async () => {
    // A database of its own: the development app below must not find this one's served address.
    const own = await createTestDatabase();
    const app = await startApp({
      databaseUrl: own.url,
      env: {
        VOUCH_ENV: 'production',
        SMTP_URL: 'smtp://127.0.0.1:2525',
        SMS_PROVIDER: 'twilio',
        TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000000',
        TWILIO_AUTH_TOKEN: 'token',
        TWILIO_FROM: '+15005550006',
        IDENTITY_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_x',
        STRIPE_WEBHOOK_SECRET: 'whsec_x',
        KEYS_SECRET: 'a-signing-key-secret-of-at-least-32-characters',
      },
    });
    try {
      expect((await fetch(`${app.baseUrl}/v1/ping`)).status).toBe(200);
      expect(app.logs()).not.toMatch(/stand-ins serve live traffic/);

      // Production ignores the pseudo-locale asked for (`?lang=en-XA`), on a case's pages and on a
      // page of no case, while the language switch itself still works.
      const { key } = await createTeam(
        own.db,
        { name: 'Production pages', adminEmail: 'owner@prodpages.test' },
        systemClock,
      );
      const opened = await fetch(`${app.baseUrl}/v1/cases/`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          subject_email: 'subject@prodpages.test',
          verification_methods: { email: true },
        }),
      });
      expect(opened.status).toBe(201);
      const { public_id } = (await opened.json()) as { public_id: string };
      const pseudo = await fetch(`${app.baseUrl}/v/${public_id}?lang=en-XA`);
      const html = await pseudo.text();
      expect(pseudo.status).toBe(200);
      expect(html).toMatch(/<html lang="en" dir="ltr">/);
      expect(html).toContain('Verify your identity');
      expect(pseudo.headers.get('content-language')).toBe('en');
      expect(pseudo.headers.getSetCookie().join('; ')).not.toContain('en-XA');
      const german = await fetch(`${app.baseUrl}/v/${public_id}?lang=de`);
      expect(await german.text()).toMatch(/<html lang="de" dir="ltr">/);
      const signIn = await fetch(`${app.baseUrl}/oauth2/authorize?lang=en-XA`);
      expect(await signIn.text()).toMatch(/<html lang="en" dir="ltr">/);
    } finally {
      await app.stop();
      await own.close();
    }
  });
});

describe('development with the stand-ins', () => {
  let app: RunningApp;
  let apiKey: string;
  let owner: ConsoleClient;
  let viewer: ConsoleClient;
  const secrets: string[] = [];

  beforeAll(async () => {
    app = await startApp({ databaseUrl: database.url, env: { LOG_LEVEL: 'debug' } });
    const created = (await runCli(['teams', 'create', '--name', 'Acme', '--admin-email', 'owner@acme.test'], {
      DATABASE_URL: database.url,
      BASE_URL: app.baseUrl,
    })) as { api_key: string; admin_password: string };
    apiKey = created.api_key;
    secrets.push(created.api_key, created.admin_password);
    owner = consoleClient(app.baseUrl);
    expect((await owner.signIn('owner@acme.test', created.admin_password)).status).toBe(200);
    const password = 'acme-owner-password-1';
    secrets.push(password);
    await owner.mutate('console.session.changePassword', {
      current_password: created.admin_password,
      new_password: password,
    });
    await owner.mutate('console.members.invite', { email: 'viewer@acme.test', role: 'viewer' });
    viewer = consoleClient(app.baseUrl);
    await inviteNewUser(owner, consoleClient(app.baseUrl), database.db, {
      email: 'viewer2@acme.test',
      role: 'viewer',
    });
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('announces each stand-in at start-up, in the console and on the subject’s page', async () => {
    const warning = app
      .logs()
      .split('\n')
      .find((line) => line.includes('stand-ins serve live traffic'));
    for (const words of STAND_IN_WORDS) expect(warning).toMatch(words);

    const me = await owner.query<{ stand_ins: string[] }>('console.session.me');
    expect(me.data?.stand_ins).toHaveLength(3);

    const created = await apiClient(app.baseUrl, apiKey).post<{ public_id: string }>('/v1/cases/', {
      subject_email: 'jane@acme.test',
      verification_methods: { government_id: true, sms: true },
    });
    const page = await (await fetch(`${app.baseUrl}/v/${created.body.public_id}`)).text();
    expect(page).toContain('Demo: identity checks are simulated.');
    expect(page).toContain('Demo: text messages are not sent.');
    expect(page).not.toContain('Demo: e-mails are not sent');
  });

  it('sends every kind of message without a token, code, link, key or password reaching the log', async () => {
    const api = apiClient(app.baseUrl, apiKey);
    const created = await api.post<{ id: string; public_id: string; verification_url: string }>(
      '/v1/cases/',
      {
        subject_email: 'subject@acme.test',
        subject_name: 'Sam Subject',
        verification_methods: { email: true, sms: true, manager: true },
        manager_name: 'Morgan Manager',
        manager_email: 'manager@acme.test',
      },
    );
    expect(created.status).toBe(201);
    const { public_id: publicId } = created.body;

    // The subject asks for an SMS code on the page, as a browser would.
    const page = await openSubjectPage(`${app.baseUrl}/v/${publicId}`);
    const sent = await postSubjectForm(`${app.baseUrl}/v/${publicId}/sms`, page, {
      action: 'send',
      phone: '+447911123456',
    });
    expect(sent.headers.get('location')).toContain('n=sms-sent');

    // A console sign-in link, and the invitations' links (sent in beforeAll).
    expect((await consoleClient(app.baseUrl).requestSignInLink('owner@acme.test')).status).toBe(200);

    const expected = [
      'subject@acme.test',
      'manager@acme.test',
      '+447911123456',
      'owner@acme.test',
      'viewer@acme.test',
    ];
    const rows = await waitFor(async () => {
      const all = await database.db.select().from(devMailbox);
      return expected.every((to) => all.some((row) => row.to === to)) ? all : null;
    });

    const sms = rows.find((row) => row.to === '+447911123456');
    const code = sms?.text.match(/\b\d{6}\b/)?.[0];
    expect(code).toBeDefined();
    secrets.push(code ?? '');
    for (const row of rows) {
      for (const link of row.text.match(/https?:\/\/\S+/g) ?? []) {
        secrets.push(link);
        const url = new URL(link);
        secrets.push(...url.pathname.split('/').filter((part) => part.length >= 16));
        secrets.push(...[...url.searchParams.values()].filter((value) => value.length >= 16));
      }
    }
    expect(secrets.filter((s) => s.includes('/email/')).length).toBeGreaterThan(0);
    expect(secrets.filter((s) => s.includes('/manager/')).length).toBeGreaterThan(0);
    expect(secrets.filter((s) => s.includes('magic-link/verify')).length).toBeGreaterThan(0);

    // Open the links too, and wait until the access log has the line of each of those requests.
    const opened: string[] = [];
    for (const link of secrets.filter((s) => s.startsWith('http'))) {
      opened.push((await fetch(link, { redirect: 'manual' })).headers.get('request-id') ?? '');
    }
    expect(opened.length).toBeGreaterThanOrEqual(4);
    await waitFor(async () =>
      opened.every((id) => app.logs().includes(`"request_id":"${id}"`)) ? true : null,
    );

    const logs = app.logs();
    for (const secret of secrets) expect(logs.includes(secret), `the log holds ${secret}`).toBe(false);
    // Nor the people's data the messages carried.
    for (const personal of ['subject@acme.test', 'Sam Subject', 'Morgan Manager', '+447911123456']) {
      expect(logs.includes(personal), `the log holds ${personal}`).toBe(false);
    }
  });

  it('the dev mailbox is for owners and admins only', async () => {
    const created = await apiClient(app.baseUrl, apiKey).post<{ public_id: string }>('/v1/cases/', {
      subject_email: 'mailbox@acme.test',
      verification_methods: { email: true },
    });
    const listed = await waitFor(async () => {
      const answer = await owner.query<Array<{ to: string }>>('console.mailbox.list');
      expect(answer.status, JSON.stringify(answer.error)).toBe(200);
      return answer.data?.some((mail) => mail.to === 'mailbox@acme.test') ? answer.data : null;
    });
    expect(listed.length).toBeGreaterThan(0);
    expect(created.body.public_id).toBeDefined();
    // A link of its own (the invitation's was opened by the log test).
    expect((await viewer.requestSignInLink('viewer2@acme.test')).status).toBe(200);
    const link = await waitFor(async () => {
      const rows = await database.db.select().from(devMailbox).where(eq(devMailbox.to, 'viewer2@acme.test'));
      if (rows.length < 2) return null;
      const newest = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
      return newest?.text.match(/https?:\/\/\S+\/api\/auth\/magic-link\/verify\S+/)?.[0] ?? null;
    });
    expect((await viewer.openLink(link)).status).toBe(302);
    const refused = await viewer.query('console.mailbox.list');
    expect(refused.status).toBe(403);
    const me = await viewer.query<{ dev_mailbox: boolean }>('console.session.me');
    expect(me.data?.dev_mailbox).toBe(false);
  });
});

async function waitFor<T>(probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Issue 12: the console's changes that work, through tRPC as the console calls them — members'
 * roles and removal, webhook endpoints updated and deleted, a failed delivery retried, the audit
 * log walked page by page, the usage page's daily "closed" count — and what the dev mailbox shows
 * to whom.
 */
import { createServer, type Server } from 'node:https';
import { and, desc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, authUsers } from '@/db/schema';
import { AUDIT_PAGE_SIZE } from '@/server/audit/record-audit';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { freePort, type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { type Certificate, eventually, makeCertificate } from '@/test/support/https-receiver';
import { inviteNewUser } from '@/test/support/invitations';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1',
      WEBHOOK_TIMEOUT_MS: '2000',
      // Many sign-ins from one address in this file.
      TRUSTED_PROXIES: '127.0.0.1',
    },
  });
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

let clients = 0;
function client(): ConsoleClient {
  clients += 1;
  return consoleClient(app.baseUrl, { forwardedFor: `192.0.2.${clients}` });
}

interface Team {
  teamId: string;
  apiKey: string;
  owner: ConsoleClient;
}

/** A team made as `teams create` makes it, its owner signed in with a password of their own. */
async function newTeam(name: string, ownerEmail: string): Promise<Team> {
  const { team, key, owner } = await createTeam(
    database.db,
    { name, adminEmail: ownerEmail, planCode: 'enterprise' },
    systemClock,
  );
  const browser = await signInReplacingPassword(
    client(),
    ownerEmail,
    owner.oneTimePassword,
    `${name}-owner-password`,
  );
  return { teamId: team.id, apiKey: key.token, owner: browser };
}

/** Invites `email` with `role`; they accept through the mailed link, which signs them in. */
async function invite(team: Team, email: string, role: 'admin' | 'viewer'): Promise<ConsoleClient> {
  const browser = client();
  await inviteNewUser(team.owner, browser, database.db, { email, role });
  return browser;
}

async function auditActions(teamId: string): Promise<string[]> {
  const rows = await database.db
    .select({ action: auditLog.action })
    .from(auditLog)
    .where(eq(auditLog.teamId, teamId))
    .orderBy(desc(auditLog.createdAt));
  return rows.map((r) => r.action);
}

interface Member {
  user_id: string;
  email: string;
  role: string;
}

async function memberByEmail(team: Team, email: string): Promise<Member | undefined> {
  const list = await team.owner.query<Member[]>('console.members.list');
  expect(list.status).toBe(200);
  return list.data?.find((m) => m.email === email);
}

describe('members', () => {
  it("changes a member's role, and the new role is what the server enforces", async () => {
    const team = await newTeam('roles', 'owner@roles.test');
    const admin = await invite(team, 'admin@roles.test', 'admin');
    expect((await admin.mutate('console.keys.create', { name: 'as admin' })).status).toBe(200);
    const member = await memberByEmail(team, 'admin@roles.test');
    if (!member) throw new Error('member missing');

    const demoted = await team.owner.mutate('console.members.changeRole', {
      user_id: member.user_id,
      role: 'viewer',
    });
    expect(demoted.status).toBe(200);
    expect(demoted.data).toEqual({ user_id: member.user_id, role: 'viewer' });
    expect((await memberByEmail(team, 'admin@roles.test'))?.role).toBe('viewer');
    const me = await admin.query<{ current_team: { role: string } }>('console.session.me');
    expect(me.data?.current_team.role).toBe('viewer');
    expect((await admin.mutate('console.keys.create', { name: 'as viewer' })).status).toBe(403);

    const promoted = await team.owner.mutate('console.members.changeRole', {
      user_id: member.user_id,
      role: 'admin',
    });
    expect(promoted.status).toBe(200);
    expect((await memberByEmail(team, 'admin@roles.test'))?.role).toBe('admin');
    expect((await admin.mutate('console.keys.create', { name: 'admin again' })).status).toBe(200);

    const [entry] = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, team.teamId), eq(auditLog.action, 'member.role_changed')))
      .orderBy(desc(auditLog.createdAt))
      .limit(1);
    expect(entry).toMatchObject({
      actorEmail: 'owner@roles.test',
      target: member.user_id,
      details: { role: 'admin' },
    });
  });

  it('removes a member, who then has no access to the team; their account stays', async () => {
    const team = await newTeam('removal', 'owner@removal.test');
    const leaving = await invite(team, 'leaving@removal.test', 'admin');
    expect((await leaving.query('console.keys.list')).status).toBe(200);
    const member = await memberByEmail(team, 'leaving@removal.test');
    if (!member) throw new Error('member missing');

    const removed = await team.owner.mutate('console.members.remove', { user_id: member.user_id });
    expect(removed.status).toBe(200);
    expect(removed.data).toEqual({ removed: true });
    expect(await memberByEmail(team, 'leaving@removal.test')).toBeUndefined();
    // Their session still exists, but it opens nothing of the team any more.
    const keys = await leaving.query('console.keys.list');
    expect(keys.status).toBe(403);
    expect((await leaving.query('console.cases.list', {})).status).toBe(403);
    const me = await leaving.query<{ current_team: unknown; teams: unknown[] }>('console.session.me');
    expect(me.data).toMatchObject({ current_team: null, teams: [] });
    const users = await database.db
      .select()
      .from(authUsers)
      .where(eq(authUsers.email, 'leaving@removal.test'));
    expect(users).toHaveLength(1);
    expect(await auditActions(team.teamId)).toContain('member.removed');
  });
});

interface EndpointWire {
  id: string;
  url: string;
  events: string[];
  description: string;
  is_active: boolean;
  disabled_at: string | null;
}

describe('webhook endpoints', () => {
  it('updates url, events, description and is_active, then deletes the endpoint', async () => {
    const team = await newTeam('endpoints', 'owner@endpoints.test');
    const created = await team.owner.mutate<EndpointWire>('console.webhooks.create', {
      url: 'https://hooks.example.com/first',
      events: ['case.closed'],
      description: 'first',
    });
    expect(created.status).toBe(200);
    const id = created.data?.id ?? '';

    const updated = await team.owner.mutate<EndpointWire>('console.webhooks.update', {
      id,
      url: 'https://hooks.example.com/second',
      events: ['case.failed', 'case.expired'],
      description: 'second',
    });
    expect(updated.status).toBe(200);
    const expected = {
      id,
      url: 'https://hooks.example.com/second',
      events: ['case.failed', 'case.expired'],
      description: 'second',
      is_active: true,
      disabled_at: null,
    };
    expect(updated.data).toMatchObject(expected);
    expect((await team.owner.query<EndpointWire>('console.webhooks.get', { id })).data).toMatchObject(
      expected,
    );

    const off = await team.owner.mutate<EndpointWire>('console.webhooks.update', { id, is_active: false });
    expect(off.data).toMatchObject({ ...expected, is_active: false, disabled_at: null });
    expect((await team.owner.query<EndpointWire>('console.webhooks.get', { id })).data?.is_active).toBe(
      false,
    );
    const on = await team.owner.mutate<EndpointWire>('console.webhooks.update', { id, is_active: true });
    expect(on.data).toMatchObject(expected);

    const deleted = await team.owner.mutate('console.webhooks.delete', { id });
    expect(deleted.status).toBe(200);
    expect(deleted.data).toEqual({ deleted: true });
    expect((await team.owner.query('console.webhooks.get', { id })).status).toBe(404);
    expect((await team.owner.query<EndpointWire[]>('console.webhooks.list')).data).toEqual([]);
    expect((await team.owner.mutate('console.webhooks.delete', { id })).status).toBe(404);

    const actions = await auditActions(team.teamId);
    for (const action of [
      'webhook_endpoint.updated',
      'webhook_endpoint.disabled',
      'webhook_endpoint.enabled',
      'webhook_endpoint.deleted',
    ]) {
      expect(actions).toContain(action);
    }
  });

  it('retries a dead-lettered delivery, which then reaches the endpoint', async () => {
    const team = await newTeam('retry', 'owner@retry.test');
    // Nothing listens here yet: every attempt is refused at once.
    const port = await freePort();
    const endpoint = await team.owner.mutate<EndpointWire>('console.webhooks.create', {
      url: `https://localhost:${port}/hook`,
      events: ['case.created'],
    });
    expect(endpoint.status, JSON.stringify(endpoint.error)).toBe(200);
    const created = await apiClient(app.baseUrl, team.apiKey).post('/v1/cases/', {
      subject_email: 'subject@retry.test',
      verification_methods: { sms: true },
    });
    expect(created.status).toBe(201);

    type Delivery = { id: string; status: string; attempt_count: number };
    const dead = await eventually(async () => {
      const list = await team.owner.query<{ results: Delivery[] }>('console.webhooks.deliveries', {});
      const delivery = list.data?.results[0];
      return delivery?.status === 'dead_letter' ? delivery : undefined;
    }, 45_000);
    expect(dead.attempt_count).toBe(8);

    const received: string[] = [];
    const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['webhook-id']));
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      const retried = await team.owner.mutate<Delivery>('console.webhooks.retry', { id: dead.id });
      expect(retried.status).toBe(200);
      expect(retried.data).toMatchObject({ id: dead.id, status: 'pending' });

      type Detail = Delivery & {
        attempts: Array<{ attempt_number: number; response_status: number | null }>;
      };
      const detail = await eventually(async () => {
        const d = await team.owner.query<Detail>('console.webhooks.delivery', { id: dead.id });
        return d.data?.status === 'success' ? d.data : undefined;
      });
      expect(detail.attempt_count).toBe(9);
      expect(detail.attempts).toHaveLength(9);
      expect(detail.attempts.at(-1)).toMatchObject({ attempt_number: 9, response_status: 200 });
      expect(received).toEqual([dead.id]);
      // A delivery that succeeded is not retried.
      expect((await team.owner.mutate('console.webhooks.retry', { id: dead.id })).status).toBe(422);
      expect(await auditActions(team.teamId)).toContain('webhook_delivery.retried');
    } finally {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    }
  }, 90_000);
});

interface AuditPage {
  entries: Array<{ id: string; action: string; created_at: string }>;
  next: { created_at: string; id: string } | null;
}

/** Every page of the team's audit log, as the console walks it. */
async function walkAudit(browser: ConsoleClient): Promise<AuditPage[]> {
  const pages: AuditPage[] = [];
  let before: AuditPage['next'] = null;
  for (let i = 0; i < 100; i++) {
    const page: { status: number; data?: AuditPage } = await browser.query<AuditPage>(
      'console.audit.list',
      before ? { before } : {},
    );
    expect(page.status).toBe(200);
    if (!page.data) throw new Error('no page');
    pages.push(page.data);
    before = page.data.next;
    if (!before) return pages;
  }
  throw new Error('the audit log never ended');
}

/** The team's entries as the database orders them: newest first, then by id. */
async function storedAuditIds(teamId: string): Promise<string[]> {
  const rows = await database.db
    .select({ id: auditLog.id })
    .from(auditLog)
    .where(eq(auditLog.teamId, teamId))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id));
  return rows.map((r) => r.id);
}

function expectWalkedOnce(pages: AuditPage[], stored: string[]): void {
  const walked = pages.flatMap((p) => p.entries.map((e) => e.id));
  expect(new Set(walked).size, 'no entry twice').toBe(walked.length);
  expect(walked).toHaveLength(stored.length);
  expect(walked).toEqual(stored);
  for (const page of pages.slice(0, -1)) expect(page.entries).toHaveLength(AUDIT_PAGE_SIZE);
  const times = pages.flatMap((p) => p.entries.map((e) => Date.parse(e.created_at)));
  for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1] ?? 0);
}

describe('audit log', () => {
  it(`walks more than two pages of ${AUDIT_PAGE_SIZE}, newest first, every entry exactly once`, async () => {
    const team = await newTeam('audit', 'owner@audit.test');
    const count = 2 * AUDIT_PAGE_SIZE + 17;
    for (let i = 0; i < count; i++) {
      const made = await team.owner.mutate('console.keys.create', { name: `key ${i}` });
      expect(made.status).toBe(200);
    }
    const pages = await walkAudit(team.owner);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expectWalkedOnce(pages, await storedAuditIds(team.teamId));
    // The newest entry is the last change made.
    expect(pages[0]?.entries[0]).toMatchObject({ action: 'api_key.created' });
    const [newest] = await database.db
      .select({ details: auditLog.details })
      .from(auditLog)
      .where(eq(auditLog.id, pages[0]?.entries[0]?.id ?? ''));
    expect(newest?.details).toMatchObject({ name: `key ${count - 1}` });
  }, 90_000);

  it('entries with the same timestamp across a page boundary are each listed once', async () => {
    const team = await newTeam('audit-ties', 'owner@audit-ties.test');
    const at = new Date(Date.now() - 60_000);
    await database.db.insert(auditLog).values(
      Array.from({ length: 2 * AUDIT_PAGE_SIZE + 5 }, (_, i) => ({
        teamId: team.teamId,
        actorEmail: 'owner@audit-ties.test',
        action: 'api_key.created',
        target: `tied-${i}`,
        createdAt: at,
      })),
    );
    const pages = await walkAudit(team.owner);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expectWalkedOnce(pages, await storedAuditIds(team.teamId));
  });

  // Entries are written at the clock's millisecond instant, which the page cursor carries exactly;
  // many changes in one millisecond share it and are told apart by id. (Stamped by PostgreSQL's
  // now(), in microseconds, entries after a page's last one in the same millisecond were skipped.)
  it('entries written in the same millisecond as a page’s last entry are not skipped', async () => {
    const team = await newTeam('audit-micro', 'owner@audit-micro.test');
    await database.db.execute(sql`
      insert into audit_log (team_id, actor_email, action, target, created_at)
      select ${team.teamId}::uuid, 'owner@audit-micro.test', 'api_key.created', 'same-instant-' || n,
             date_trunc('milliseconds', now()) - interval '1 minute'
        from generate_series(1, ${2 * AUDIT_PAGE_SIZE + 5}) as n`);
    expectWalkedOnce(await walkAudit(team.owner), await storedAuditIds(team.teamId));
  });
});

describe('usage page', () => {
  it("counts today's closed cases (not failed or open ones) in the daily figures", async () => {
    const team = await newTeam('usage', 'owner@usage.test');
    const rest = apiClient(app.baseUrl, team.apiKey);
    const openCase = async () => {
      const res = await rest.post<{ public_id: string }>('/v1/cases/', {
        subject_email: 'subject@usage.test',
        verification_methods: { custom_question: true },
        custom_question_text: 'Badge colour?',
        custom_question_answer: 'Blue',
      });
      expect(res.status).toBe(201);
      return res.body.public_id;
    };
    const answer = async (publicId: string, text: string) => {
      const url = `${app.baseUrl}/v/${publicId}`;
      const page = await openSubjectPage(url);
      expect((await postSubjectForm(`${url}/question`, page, { answer: text })).status).toBe(303);
    };
    // Two closed, one failed, one left open: each count differs from the others.
    const closing = [await openCase(), await openCase()];
    const failing = await openCase();
    await openCase();
    for (const publicId of closing) await answer(publicId, ' blue ');
    for (let i = 0; i < 3; i++) await answer(failing, 'Red');
    const statuses = await database.sql<{ status: string }[]>`
      select status from cases where team_id = ${team.teamId} order by status`;
    expect(statuses.map((s) => s.status)).toEqual(['closed', 'closed', 'failed', 'open']);

    type Overview = { daily: Array<{ day: string; created: number; closed: number }> };
    const overview = await team.owner.query<Overview>('console.account.overview');
    expect(overview.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const daily = overview.data?.daily ?? [];
    expect(daily.at(-1)).toEqual({ day: today, created: 4, closed: 2 });
    expect(daily.reduce((sum, d) => sum + d.closed, 0)).toBe(2);
  });
});

interface MailboxEntry {
  to: string;
  subject: string;
  text: string;
}

describe('dev mailbox', () => {
  it("shows a manager their own mail and their team's, never a colleague's sign-in link nor another team's", async () => {
    const echo = await newTeam('echo', 'owner@echo.test');
    const foxtrot = await newTeam('foxtrot', 'owner@foxtrot.test');
    const admin = await invite(echo, 'admin@echo.test', 'admin');
    const viewer = await invite(echo, 'viewer@echo.test', 'viewer');
    // A sign-in link the owner asked for, for themselves.
    expect((await client().requestSignInLink('owner@echo.test')).status).toBe(200);

    const openEmailCase = async (team: Team) => {
      const res = await apiClient(app.baseUrl, team.apiKey).post<{ public_id: string }>('/v1/cases/', {
        subject_email: 'same.subject@example.test',
        verification_methods: { email: true, sms: true },
      });
      expect(res.status).toBe(201);
      return res.body.public_id;
    };
    const echoCase = await openEmailCase(echo);
    const foxtrotCase = await openEmailCase(foxtrot);
    // A text message (dev SMS) about each case.
    for (const publicId of [echoCase, foxtrotCase]) {
      const url = `${app.baseUrl}/v/${publicId}`;
      const page = await openSubjectPage(url);
      const sent = await postSubjectForm(`${url}/sms`, page, { action: 'send', phone: '+44 7911 123456' });
      expect(sent.headers.get('location')).toContain('n=sms-sent');
    }

    // Everything has reached the mailbox.
    await eventually(async () => {
      const [row] = await database.sql<{ count: number }[]>`select count(*)::int as count from dev_mailbox`;
      const [queued] = await database.sql<{ count: number }[]>`
        select count(*)::int as count from mail_outbox where status = 'queued'`;
      return queued?.count === 0 && (row?.count ?? 0) > 0;
    });

    const list = async (browser: ConsoleClient) => {
      const res = await browser.query<MailboxEntry[]>('console.mailbox.list');
      expect(res.status).toBe(200);
      return res.data ?? [];
    };
    const aboutCase = (mails: MailboxEntry[], publicId: string) =>
      mails.filter((m) => m.text.includes(`/v/${publicId}`) || m.to === '+447911123456');
    const signInLinksTo = (mails: MailboxEntry[], email: string) =>
      mails.filter((m) => m.to === email && m.text.includes('/api/auth/magic-link/verify'));
    // An invitation's link signs in an invitee without an account: theirs alone to see.
    const invitationsTo = (mails: MailboxEntry[], email: string) =>
      mails.filter((m) => m.to === email && m.text.includes('/console/invitation?token='));

    const ownerMail = await list(echo.owner);
    expect(ownerMail.filter((m) => m.text.includes(`/v/${echoCase}`))).toHaveLength(1);
    expect(ownerMail.filter((m) => m.to === '+447911123456')).toHaveLength(1);
    expect(signInLinksTo(ownerMail, 'owner@echo.test')).toHaveLength(1);
    expect(invitationsTo(ownerMail, 'admin@echo.test')).toEqual([]);
    expect(invitationsTo(ownerMail, 'viewer@echo.test')).toEqual([]);
    expect(ownerMail.filter((m) => m.text.includes(`/v/${foxtrotCase}`))).toEqual([]);

    const adminMail = await list(admin);
    expect(adminMail.filter((m) => m.text.includes(`/v/${echoCase}`))).toHaveLength(1);
    expect(adminMail.filter((m) => m.to === '+447911123456')).toHaveLength(1);
    expect(invitationsTo(adminMail, 'admin@echo.test')).toHaveLength(1);
    expect(signInLinksTo(adminMail, 'owner@echo.test')).toEqual([]);
    expect(invitationsTo(adminMail, 'viewer@echo.test')).toEqual([]);
    expect(adminMail.filter((m) => m.text.includes(`/v/${foxtrotCase}`))).toEqual([]);

    // Mail to the same subject about the other team's case, and its text, stay with that team.
    const foxtrotMail = await list(foxtrot.owner);
    expect(aboutCase(foxtrotMail, foxtrotCase)).toHaveLength(2);
    expect(foxtrotMail.filter((m) => m.text.includes(`/v/${echoCase}`))).toEqual([]);
    expect(foxtrotMail.filter((m) => m.to.endsWith('@echo.test'))).toEqual([]);
    const foxtrotText = foxtrotMail.find((m) => m.to === '+447911123456');
    expect(ownerMail.map((m) => m.text)).not.toContain(foxtrotText?.text);

    // Viewers do not get the mailbox at all.
    const refused = await viewer.query('console.mailbox.list');
    expect(refused.status).toBe(403);
  });
});

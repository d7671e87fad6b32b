/**
 * The restore drill of docs/guides/operations.md, run as an operator would: a service with cases,
 * sealed audit entries, a signed evidence record, and then work still waiting in the database (the
 * web process took requests while no worker ran: webhook deliveries and link mails queued); a
 * `pg_dump`; the dump restored into a new database, where the original is gone. Started there with
 * the same secrets, the service serves on: `audit verify` passes, the old evidence record
 * verifies, a console session signed in before the dump still works, each waiting delivery and
 * mail goes out exactly once and nothing sent before the dump goes out again. Started with another
 * KEYS_SECRET (or SIGNING_KEY_SECRET, its former name), each process refuses in one line naming it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isNull } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '@/db/client';
import { auditLog } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp, startWorkerProcess } from '@/test/support/app';
import {
  type ConsoleClient,
  consoleClient,
  runCli,
  signInReplacingPassword,
} from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
  webhookProblems,
} from '@/test/support/https-receiver';
import { type SmtpSink, startSmtpSink } from '@/test/support/smtp-sink';

const run = promisify(execFile);

/** The secrets that travel beside a backup, never in it. */
const SECRETS = {
  AUTH_SECRET: 'a-console-session-secret-of-32-characters',
  KEYS_SECRET: 'a-keys-secret-of-at-least-thirty-two-chars',
};
const WRONG = 'another-secret-of-at-least-thirty-two-characters';

/**
 * PostgreSQL's client programs for the server under test: pg_dump refuses a server newer than
 * itself, so the first installed version at least the server's. The embedded PostgreSQL 18 ships
 * none; CI runs this file on PostgreSQL 15, whose programs are installed with it.
 */
function clientPrograms(serverMajor: number): string | undefined {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .map(Number)
        .filter(
          (major) => major >= serverMajor && existsSync(path.join(root, String(major), 'bin', 'pg_dump')),
        )
        .sort((a, b) => a - b)
    : [];
  return majors.length > 0 ? path.join(root, String(majors[0]), 'bin') : undefined;
}

interface CaseWire {
  id: string;
  status: string;
}
interface Envelope {
  id: string;
  type: string;
  data: { case_id?: string };
}

let certificate: Certificate;
let receiver: Receiver;
let smtp: SmtpSink;
let original: TestDatabase | undefined;
let restored: Database | undefined;
let restoredUrl: string;
let bin: string | undefined;
let work: string;
let app: RunningApp | undefined;

let teamId: string;
let liveKey: string;
let testKey: string;
let owner: ConsoleClient;
let evidenceFile: string;
/** Event ids delivered before the dump, and the live cases whose work was still waiting at it. */
let deliveredBeforeDump: string[];
const waitingSubjects = ['ana@restore.test', 'bo@restore.test', 'cy@restore.test'];
let waitingCaseIds: string[];

/** The service's environment: the receiver trusted and reachable, mail to the SMTP sink. */
const serviceEnv = () => ({
  ...SECRETS,
  SMTP_URL: smtp.url,
  NODE_EXTRA_CA_CERTS: certificate.certPath,
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  JOB_TICK_SECONDS: '1',
});

const bodyOf = (r: { body: string }) => JSON.parse(r.body) as Envelope;

beforeAll(async () => {
  original = await createTestDatabase();
  const [{ server_version_num: version } = { server_version_num: '0' }] = await original.sql<
    { server_version_num: string }[]
  >`show server_version_num`;
  bin = clientPrograms(Math.floor(Number(version) / 10_000));
  if (!bin && process.env.CI)
    throw new Error(`no pg_dump for PostgreSQL ${version} (CI installs postgresql-15)`);
  if (!bin) return;

  work = mkdtempSync(path.join(tmpdir(), 'vouch-restore-'));
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  smtp = await startSmtpSink();

  // The service at work: web and workers in one process.
  app = await startApp({ databaseUrl: original.url, env: serviceEnv() });
  const created = await createTeam(
    original.db,
    { name: 'Restore drill', adminEmail: 'owner@restore.test' },
    systemClock,
  );
  teamId = created.team.id;
  liveKey = created.key.token;
  testKey = created.testKey.token;
  owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@restore.test',
    created.owner.oneTimePassword,
    'restore-owner-password-1',
  );
  const live = apiClient(app.baseUrl, liveKey);
  const test = apiClient(app.baseUrl, testKey);
  for (const client of [live, test]) {
    const endpoint = await client.post('/v1/webhooks/endpoints/', {
      url: receiver.url('/restore'),
      events: ['case.created', 'case.closed'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
  }

  // A closed test case and its evidence record, signed before the dump.
  const closing = await test.post<CaseWire>('/v1/cases/', {
    subject_email: 'dana@restore.test',
    verification_methods: { email: true, government_id: true },
  });
  expect(closing.status, closing.text).toBe(201);
  for (const method of ['email', 'government_id']) {
    const step = await test.post<CaseWire>(`/v1/cases/${closing.body.id}/simulate/`, {
      action: 'complete_step',
      method,
    });
    expect(step.status, step.text).toBe(200);
  }
  const record = await test.get(`/v1/cases/${closing.body.id}/evidence/`);
  expect(record.status, record.text).toBe(200);
  evidenceFile = path.join(work, 'evidence.json');
  writeFileSync(evidenceFile, record.text);

  // Everything the running service had to send, sent; every audit entry sealed.
  const sent = await receiver.waitFor('/restore', 2);
  deliveredBeforeDump = sent.map((r) => bodyOf(r).id);
  await eventually(async () => {
    const unsealed = await original?.db.select().from(auditLog).where(isNull(auditLog.hash));
    return unsealed?.length === 0;
  });
  await app.stop();

  // Requests taken while no worker runs: their deliveries and link mails wait in the database.
  app = await startApp({ databaseUrl: original.url, env: serviceEnv(), script: 'web' });
  const web = apiClient(app.baseUrl, liveKey);
  waitingCaseIds = [];
  for (const subject of waitingSubjects) {
    const res = await web.post<CaseWire>('/v1/cases/', {
      subject_email: subject,
      verification_methods: { email: true },
    });
    expect(res.status, res.text).toBe(201);
    waitingCaseIds.push(res.body.id);
  }
  await app.stop();
  app = undefined;

  // The backup, then the restore into a new database; the original is dropped, so nothing the
  // restored service does can come from it.
  const dump = path.join(work, 'vouch.dump');
  await run(path.join(bin, 'pg_dump'), ['--format=custom', `--file=${dump}`, original.url]);
  await original.close();
  original = undefined;
  const adminUrl = inject('adminDatabaseUrl');
  const name = `vouch_restored_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  restoredUrl = url.toString();
  await run(path.join(bin, 'pg_restore'), [
    '--no-owner',
    '--no-privileges',
    '--exit-on-error',
    `--dbname=${restoredUrl}`,
    dump,
  ]);
  restored = connectDatabase(restoredUrl, { max: 2 });
}, 180_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await smtp?.close();
  await original?.close();
  await restored?.close();
  if (restoredUrl) {
    const admin = postgres(inject('adminDatabaseUrl'), { max: 1, onnotice: () => {} });
    await admin
      .unsafe(`drop database if exists ${new URL(restoredUrl).pathname.slice(1)} with (force)`)
      .catch(() => {});
    await admin.end();
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a restored database, started with the same secrets', () => {
  it('serves on, and sends what was waiting exactly once', async (context) => {
    // Without client programs for the server (CI fails in beforeAll), there is no dump to restore.
    if (!bin) return context.skip();
    const mailsBefore = smtp.mails.length;
    app = await startApp({ databaseUrl: restoredUrl, env: serviceEnv() });

    // The waiting deliveries (case.created of each live case) and the link mails go out.
    const deliveries = await eventually(async () => {
      const waiting = receiver
        .requestsTo('/restore')
        .filter((r) => waitingCaseIds.includes(bodyOf(r).data.case_id ?? ''));
      return waiting.length >= waitingCaseIds.length ? waiting : undefined;
    }, 60_000);
    const mailTo = (subject: string) => smtp.mails.slice(mailsBefore).filter((m) => m.to.includes(subject));
    await eventually(async () => waitingSubjects.every((subject) => mailTo(subject).length > 0), 60_000);
    // Then a few of the workers' ticks: nothing goes out twice, nothing sent before the dump again.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const all = receiver.requestsTo('/restore');
    expect(deliveries.map((r) => bodyOf(r).type)).toEqual(['case.created', 'case.created', 'case.created']);
    expect(webhookProblems(all)).toEqual([]);
    const perEvent = new Map<string, number>();
    for (const request of all) perEvent.set(bodyOf(request).id, (perEvent.get(bodyOf(request).id) ?? 0) + 1);
    expect(
      [...perEvent.values()].every((count) => count === 1),
      JSON.stringify([...perEvent]),
    ).toBe(true);
    expect(all).toHaveLength(deliveredBeforeDump.length + waitingCaseIds.length);
    for (const subject of waitingSubjects) expect(mailTo(subject), subject).toHaveLength(1);

    // The chain holds, every entry sealed (the waiting requests' entries by the restored worker).
    const audit = await eventually(async () => {
      const verdict = await runCli(['audit', 'verify', '--team', teamId], { DATABASE_URL: restoredUrl });
      const [team] = verdict.teams as { entries: number; sealed_through: number }[];
      return team && team.entries === team.sealed_through ? verdict : undefined;
    }, 30_000);
    expect(audit).toMatchObject({ ok: true, teams: [{ team_id: teamId }] });

    // The evidence record signed before the dump verifies against the restored service's keys.
    expect(
      await runCli(['evidence', 'verify', evidenceFile, '--jwks', `${app.baseUrl}/.well-known/jwks.json`], {
        DATABASE_URL: restoredUrl,
        ...SECRETS,
      }),
    ).toMatchObject({ ok: true });

    // A console session signed in before the dump is still one (the same AUTH_SECRET).
    const again = consoleClient(app.baseUrl);
    for (const [name, value] of Object.entries(owner.cookies())) again.setCookie(name, value);
    const me = await again.query<{ user: { email: string } }>('console.session.me');
    expect(me.status).toBe(200);
    expect(me.data).toMatchObject({ user: { email: 'owner@restore.test' } });

    // The API keys work: a new case, and its webhook, once.
    const fresh = await apiClient(app.baseUrl, liveKey).post<CaseWire>('/v1/cases/', {
      subject_email: 'eve@restore.test',
      verification_methods: { email: true },
    });
    expect(fresh.status, fresh.text).toBe(201);
    await eventually(async () =>
      receiver.requestsTo('/restore').some((r) => bodyOf(r).data.case_id === fresh.body.id),
    );
    await app.stop();
    app = undefined;
  }, 180_000);
});

describe('a restored database, started with another secret', () => {
  for (const variable of ['KEYS_SECRET', 'SIGNING_KEY_SECRET']) {
    it(`is refused in one line naming ${variable}`, async (context) => {
      if (!bin) return context.skip();
      const refusal = await startWorkerProcess({
        databaseUrl: restoredUrl,
        env: { AUTH_SECRET: SECRETS.AUTH_SECRET, KEYS_SECRET: '', [variable]: WRONG },
      }).then(
        () => 'started',
        (error: Error) => error.message,
      );
      const [status = '', ...lines] = refusal.split('\n').filter((line) => line.trim() !== '');
      expect(status).toBe('worker exited with 1:');
      const errors = lines.filter((line) => line.includes('"level":"error"'));
      expect(errors, refusal).toHaveLength(1);
      expect(JSON.parse(errors[0] ?? '{}')).toMatchObject({
        message: 'refusing to start',
        reason: expect.stringMatching(
          new RegExp(`^${variable}: not the secret the signing keys were stored under`),
        ),
      });
      expect(refusal).not.toContain(WRONG);
    }, 90_000);
  }
});

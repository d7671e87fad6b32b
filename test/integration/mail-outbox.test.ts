import { eq, inArray, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devMailbox, mailOutbox } from '@/db/schema';
import { MAIL_BATCH_SIZE, type MailSenderDeps, sendDueMails } from '@/server/mail/send-mail';
import { enqueueMail } from '@/server/platform/outbox/enqueue-mail';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { type SmtpSink, startSmtpSink } from '@/test/support/smtp-sink';

let smtpDatabase: TestDatabase;
let devDatabase: TestDatabase;
let smtpApp: RunningApp;
let devApp: RunningApp;
let smtp: SmtpSink;

beforeAll(async () => {
  smtp = await startSmtpSink();
  smtpDatabase = await createTestDatabase();
  devDatabase = await createTestDatabase();
  [smtpApp, devApp] = await Promise.all([
    startApp({ databaseUrl: smtpDatabase.url, env: { SMTP_URL: smtp.url } }),
    startApp({ databaseUrl: devDatabase.url, env: { LOG_LEVEL: 'info' } }),
  ]);
});

afterAll(async () => {
  await smtpApp?.stop();
  await devApp?.stop();
  await smtp?.close();
  await smtpDatabase?.close();
  await devDatabase?.close();
});

describe('enqueueMail', () => {
  it('sends over SMTP once the transaction commits, and never when it rolls back', async () => {
    await expect(
      smtpDatabase.db.transaction(async (tx) => {
        await enqueueMail(tx, { to: 'never@mail.test', subject: 'rolled back', text: 'no' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const { id } = await smtpDatabase.db.transaction((tx) =>
      enqueueMail(tx, {
        to: 'subject@mail.test',
        subject: 'Verify your identity',
        text: 'Open https://vouch.test/v/abc',
        html: '<p>Open <a href="https://vouch.test/v/abc">the link</a></p>',
      }),
    );
    const mail = await eventually(async () => smtp.mails.find((m) => m.to.includes('subject@mail.test')));
    expect(mail.raw).toContain('Subject: Verify your identity');
    expect(mail.raw).toContain('Open https://vouch.test/v/abc');
    expect(mail.raw).toContain('text/html');
    const row = await eventually(async () => {
      const [r] = await smtpDatabase.db.select().from(mailOutbox).where(eq(mailOutbox.id, id));
      return r?.status === 'sent' ? r : undefined;
    });
    expect(row).toMatchObject({ attempts: 1, lastError: null });
    expect(row.sentAt).not.toBeNull();
    // The worker has run since the rollback (it sent the later mail): the rolled-back one never
    // existed for it to send.
    expect(smtp.mails.filter((m) => m.to.includes('never@mail.test'))).toHaveLength(0);
    expect(
      await smtpDatabase.db.select().from(mailOutbox).where(eq(mailOutbox.to, 'never@mail.test')),
    ).toHaveLength(0);
    expect(await smtpDatabase.db.select().from(devMailbox)).toHaveLength(0);
  });

  it('stores mail in the dev mailbox when SMTP_URL is unset, and logs its id, never its text', async () => {
    await devDatabase.db.transaction((tx) =>
      enqueueMail(tx, { to: 'dev@mail.test', subject: 'Dev mail', text: 'Link: https://vouch.test/v/dev' }),
    );
    const stored = await eventually(async () => {
      const [row] = await devDatabase.db.select().from(devMailbox).where(eq(devMailbox.to, 'dev@mail.test'));
      return row;
    });
    expect(stored).toMatchObject({ subject: 'Dev mail', text: 'Link: https://vouch.test/v/dev', html: null });
    const [outbox] = await devDatabase.db.select().from(mailOutbox).where(eq(mailOutbox.to, 'dev@mail.test'));
    expect(outbox?.status).toBe('sent');
    await eventually(async () => devApp.logs().includes(outbox?.id ?? 'no outbox row'));
    expect(devApp.logs()).not.toContain('vouch.test/v/dev');
    expect(devApp.logs()).not.toContain('dev@mail.test');
  });
});

describe('the outbox sender (sendDueMails), run here as a worker process runs it', () => {
  let database: TestDatabase;
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink();
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await sink?.close();
    await database?.close();
  });

  function sender(now: () => Date, retryDelaySeconds = 30): MailSenderDeps {
    return {
      db: database.db,
      clock: now,
      transport: { smtpUrl: sink.url, from: 'Vouch <no-reply@vouch.test>' },
      retryDelaySeconds,
    };
  }

  async function queueMails(prefix: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    await database.db.transaction(async (tx) => {
      for (let i = 0; i < count; i++) {
        ids.push(
          (await enqueueMail(tx, { to: `${prefix}${i}@outbox.test`, subject: `mail ${i}`, text: 'x' })).id,
        );
      }
    });
    return ids;
  }

  it('sends each mail exactly once when two workers poll at the same time, past one batch', async () => {
    const count = MAIL_BATCH_SIZE * 2 + 20;
    await queueMails('pair', count);
    const now = () => new Date();
    // The server holds every message: the first worker's batch stays in flight, so the second
    // can take its own only by claiming beside it (a lock that serialized them would leave just
    // one batch claimed and in flight here).
    const release = sink.hold();
    const workers = Promise.all([sendDueMails(sender(now)), sendDueMails(sender(now))]);
    try {
      await eventually(async () => (sink.held() === MAIL_BATCH_SIZE * 2 ? true : undefined));
      const [leased] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from mail_outbox
         where "to" like 'pair%' and status = 'queued' and attempts = 1 and next_attempt_at > now()`;
      expect(leased?.n).toBe(MAIL_BATCH_SIZE * 2);
    } finally {
      release();
    }
    const [first, second] = await workers;
    expect(first).toBeGreaterThanOrEqual(MAIL_BATCH_SIZE);
    expect(second).toBeGreaterThanOrEqual(MAIL_BATCH_SIZE);
    expect(first + second).toBe(count);
    const received = sink.mails.flatMap((mail) => mail.to).filter((to) => to.startsWith('pair'));
    expect(received).toHaveLength(count);
    expect(new Set(received).size).toBe(count);
    const rows = await database.db.select().from(mailOutbox).where(like(mailOutbox.to, 'pair%'));
    expect(rows.map((row) => [row.status, row.attempts, row.nextAttemptAt])).toEqual(
      rows.map(() => ['sent', 1, null]),
    );
    // Nothing is left for a third poll.
    expect(await sendDueMails(sender(now))).toBe(0);
  });

  it('retries a failing mail with a doubling delay, then keeps it failed', async () => {
    const [id] = await queueMails('bounce-retry', 1);
    let now = new Date('2030-01-01T00:00:00Z');
    const deps = sender(() => now, 10);
    const row = async () =>
      (
        await database.db
          .select()
          .from(mailOutbox)
          .where(eq(mailOutbox.id, id ?? ''))
      )[0];
    const due: number[] = [];
    for (let attempt = 1; attempt <= 6; attempt++) {
      expect(await sendDueMails(deps)).toBe(1);
      const after = await row();
      expect(after).toMatchObject({
        attempts: attempt,
        lastError: expect.stringContaining('mailbox unavailable'),
      });
      if (attempt < 6) {
        expect(after?.status).toBe('queued');
        due.push((after?.nextAttemptAt?.getTime() ?? 0) - now.getTime());
        // Not due a millisecond before its time.
        now = new Date(now.getTime() + (due.at(-1) ?? 0) - 1);
        expect(await sendDueMails(deps)).toBe(0);
        now = new Date(now.getTime() + 1);
      }
    }
    expect(due).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
    expect(await row()).toMatchObject({ status: 'failed', attempts: 6, nextAttemptAt: null });
    now = new Date(now.getTime() + 3_600_000);
    expect(await sendDueMails(deps)).toBe(0);
  });

  it('takes a mail again once the lease of a worker that died while sending it ends', async () => {
    const [id] = await queueMails('leased', 1);
    const start = new Date('2031-01-01T00:00:00Z');
    // A worker claimed it (attempt counted, lease set) and died before sending.
    const [claimed] = await database.db
      .update(mailOutbox)
      .set({ attempts: 1, nextAttemptAt: new Date(start.getTime() + 5 * 60_000) })
      .where(eq(mailOutbox.id, id ?? ''))
      .returning();
    expect(claimed?.status).toBe('queued');
    expect(await sendDueMails(sender(() => new Date(start.getTime() + 5 * 60_000 - 1)))).toBe(0);
    expect(sink.mails.filter((mail) => mail.to.includes('leased0@outbox.test'))).toHaveLength(0);
    expect(await sendDueMails(sender(() => new Date(start.getTime() + 5 * 60_000)))).toBe(1);
    expect(sink.mails.filter((mail) => mail.to.includes('leased0@outbox.test'))).toHaveLength(1);
    const [row] = await database.db
      .select()
      .from(mailOutbox)
      .where(inArray(mailOutbox.id, [id ?? '']));
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
  });
});

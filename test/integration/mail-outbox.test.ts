import { eq } from 'drizzle-orm';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devMailbox, mailOutbox } from '@/db/schema';
import { setJobQueue } from '@/server/platform/jobs/producers';
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
const producers: PgBoss[] = [];

/** This process queues mail the way any app node does; the app's workers send it. */
async function producerFor(database: TestDatabase): Promise<void> {
  const boss = new PgBoss({
    connectionString: database.url,
    schema: 'pgboss',
    max: 2,
    supervise: false,
    schedule: false,
  });
  await boss.start();
  producers.push(boss);
  setJobQueue(boss);
}

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
  setJobQueue(undefined);
  for (const boss of producers) await boss.stop({ graceful: false });
  await smtpApp?.stop();
  await devApp?.stop();
  await smtp?.close();
  await smtpDatabase?.close();
  await devDatabase?.close();
});

describe('enqueueMail', () => {
  it('sends over SMTP once the transaction commits, and never when it rolls back', async () => {
    await producerFor(smtpDatabase);
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
    await producerFor(devDatabase);
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

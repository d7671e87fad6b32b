import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '@/db/client';
import { devMailbox, mailOutbox } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import { logger } from '@/server/platform/logger';

export interface MailTransportConfig {
  smtpUrl?: string;
  from: string;
}

const transports = new Map<string, Transporter>();

function smtpTransport(url: string): Transporter {
  let transport = transports.get(url);
  if (!transport) {
    transport = nodemailer.createTransport(url);
    transports.set(url, transport);
  }
  return transport;
}

export interface MailToSend {
  mailId: string;
  /** The job's last retry: a failure now leaves the row `failed` instead of `queued`. */
  isLastTry: boolean;
}

/** A mail that could not be sent, and why; its job is failed so that it retries. */
export interface MailFailure {
  mailId: string;
  error: string;
}

type StoredMail = typeof mailOutbox.$inferSelect;

/**
 * Dev mailbox: the copies and the outbox's `sent` mark in one statement, so a mail is in the
 * mailbox exactly when its row says sent, and a batch costs one round trip.
 */
async function storeInDevMailbox(db: Db, mails: StoredMail[], sentAt: Date): Promise<void> {
  const ids = mails.map((mail) => mail.id);
  await db.execute(sql`
    with sent as (
      update ${mailOutbox}
         set status = 'sent', sent_at = ${sentAt.toISOString()}::timestamptz, attempts = attempts + 1, last_error = null
       where id = any(${`{${ids.join(',')}}`}::uuid[]) and status <> 'sent'
      returning "to", subject, text, html, case_id
    )
    insert into ${devMailbox} ("to", subject, text, html, case_id)
    select "to", subject, text, html, case_id from sent
  `);
  // Only ids: a mail's text holds links and tokens, and its recipient is personal data.
  logger.info('mail kept in the dev mailbox (not sent)', { mail_ids: ids });
}

/** SMTP: each mail on its own (one may fail while the others go), then one update for the sent. */
async function sendOverSmtp(
  db: Db,
  mails: StoredMail[],
  config: MailTransportConfig & { smtpUrl: string },
  clock: Clock,
): Promise<MailFailure[]> {
  const outcomes = await Promise.allSettled(
    mails.map((mail) =>
      smtpTransport(config.smtpUrl).sendMail({
        from: config.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html ? { html: mail.html } : {}),
      }),
    ),
  );
  const sent = mails.filter((_, index) => outcomes[index]?.status === 'fulfilled').map((mail) => mail.id);
  if (sent.length > 0) {
    await db
      .update(mailOutbox)
      .set({ status: 'sent', sentAt: clock(), attempts: sql`${mailOutbox.attempts} + 1`, lastError: null })
      .where(inArray(mailOutbox.id, sent));
  }
  return mails.flatMap((mail, index) => {
    const outcome = outcomes[index];
    if (outcome?.status !== 'rejected') return [];
    const reason = outcome.reason as unknown;
    return [{ mailId: mail.id, error: reason instanceof Error ? reason.message : String(reason) }];
  });
}

/**
 * Sends stored mails: over SMTP when SMTP_URL is set, otherwise into the dev mailbox; a test-mode
 * case's mails always go to the dev mailbox, never out. Mails already sent are skipped (a job may run twice). A failure is written on its row
 * (attempts, last_error) and returned so its job retries; after the last retry the row stays
 * `failed`, visible rather than silently dropped.
 */
export async function sendStoredMails(
  db: Db,
  batch: MailToSend[],
  config: MailTransportConfig,
  clock: Clock,
): Promise<MailFailure[]> {
  if (batch.length === 0) return [];
  const mails = await db
    .select()
    .from(mailOutbox)
    .where(
      and(
        inArray(
          mailOutbox.id,
          batch.map((item) => item.mailId),
        ),
        ne(mailOutbox.status, 'sent'),
      ),
    );
  if (mails.length === 0) return [];
  const smtpUrl = config.smtpUrl;
  const outgoing = smtpUrl ? mails.filter((mail) => mail.livemode) : [];
  const kept = smtpUrl ? mails.filter((mail) => !mail.livemode) : mails;
  let failures: MailFailure[];
  try {
    if (kept.length > 0) await storeInDevMailbox(db, kept, clock());
    failures =
      smtpUrl && outgoing.length > 0 ? await sendOverSmtp(db, outgoing, { ...config, smtpUrl }, clock) : [];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    failures = mails.map((mail) => ({ mailId: mail.id, error: message }));
  }
  const lastTry = new Set(batch.filter((item) => item.isLastTry).map((item) => item.mailId));
  for (const failure of failures) {
    await db
      .update(mailOutbox)
      .set({
        status: lastTry.has(failure.mailId) ? 'failed' : 'queued',
        attempts: sql`${mailOutbox.attempts} + 1`,
        lastError: failure.error,
      })
      .where(eq(mailOutbox.id, failure.mailId));
  }
  return failures;
}

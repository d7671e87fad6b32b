import { SpanKind } from '@opentelemetry/api';
import { and, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '@/db/client';
import { devMailbox, mailOutbox } from '@/db/schema';
import { name, names } from '@/db/sql-names';
import type { Clock } from '@/server/platform/clock';
import { logger } from '@/server/platform/logger';
import { inSpan } from '@/server/platform/tracing';

export interface MailTransportConfig {
  smtpUrl?: string;
  from: string;
}

const transports = new Map<string, Transporter>();

function smtpTransport(url: string): Transporter {
  let transport = transports.get(url);
  if (!transport) {
    // Time-outs well inside the mail's lease (below): a stuck server fails the attempt, and the
    // mail is retried, long before another worker could take it (nodemailer waits up to 10 min).
    transport = nodemailer.createTransport({
      url,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
    transports.set(url, transport);
  }
  return transport;
}

/** How many mails one claim takes: a full batch is followed at once by the next. */
export const MAIL_BATCH_SIZE = 50;
/** Retries after the first attempt; after the last one a mail stays `failed`. */
export const MAIL_RETRY_LIMIT = 5;
/**
 * How long a worker owns the mails it claimed. Longer than the longest send the transport allows
 * (its time-outs below), so a live worker's mail is never taken twice; a dead worker's mails are
 * taken again when it ends.
 */
const MAIL_LEASE_MS = 5 * 60_000;
/** The longest wait between two attempts of one mail, however many failed before. */
const MAX_RETRY_DELAY_MS = 60 * 60_000;

export interface MailSenderDeps {
  db: Db;
  clock: Clock;
  transport: MailTransportConfig;
  /** The wait before the first retry; each later one waits twice as long (MAIL_RETRY_DELAY_SECONDS). */
  retryDelaySeconds: number;
}

/** A mail that could not be sent, and why. */
interface MailFailure {
  mail: StoredMail;
  error: string;
}

type StoredMail = typeof mailOutbox.$inferSelect;

/**
 * Takes up to `limit` queued mails that are due, oldest due first, and leases them to this worker
 * in one statement: each gets its attempt counted and its next due time set to the lease's end.
 * SKIP LOCKED lets several workers claim at once without waiting on or taking each other's rows.
 */
async function claimDueMails(db: Db, now: Date, limit: number): Promise<StoredMail[]> {
  const due = db
    .select({ id: mailOutbox.id })
    .from(mailOutbox)
    .where(
      and(
        eq(mailOutbox.status, 'queued'),
        or(isNull(mailOutbox.nextAttemptAt), lte(mailOutbox.nextAttemptAt, now)),
      ),
    )
    .orderBy(sql`${mailOutbox.nextAttemptAt} asc nulls first`)
    .limit(limit)
    .for('update', { skipLocked: true });
  return db
    .update(mailOutbox)
    .set({
      attempts: sql`${mailOutbox.attempts} + 1`,
      nextAttemptAt: new Date(now.getTime() + MAIL_LEASE_MS),
    })
    .where(inArray(mailOutbox.id, due))
    .returning();
}

/**
 * Dev mailbox: the copies and the outbox's `sent` mark in one statement, so a mail is in the
 * mailbox exactly when its row says sent, and a batch costs one round trip.
 */
async function storeInDevMailbox(db: Db, mails: StoredMail[], sentAt: Date): Promise<void> {
  const ids = mails.map((mail) => mail.id);
  await db.execute(sql`
    with sent as (
      update ${mailOutbox}
         set ${name(mailOutbox.status)} = 'sent', ${name(mailOutbox.sentAt)} = ${sentAt.toISOString()}::timestamptz,
             ${name(mailOutbox.nextAttemptAt)} = null, ${name(mailOutbox.lastError)} = null
       where ${mailOutbox.id} = any(${`{${ids.join(',')}}`}::uuid[]) and ${mailOutbox.status} = 'queued'
      returning ${names(mailOutbox.to, mailOutbox.subject, mailOutbox.text, mailOutbox.html, mailOutbox.language, mailOutbox.caseId)}
    )
    insert into ${devMailbox} (${names(devMailbox.to, devMailbox.subject, devMailbox.text, devMailbox.html, devMailbox.language, devMailbox.caseId)})
    select ${names(mailOutbox.to, mailOutbox.subject, mailOutbox.text, mailOutbox.html, mailOutbox.language, mailOutbox.caseId)} from sent
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
  // A span per send (tracing on) names the SMTP server, never the recipient or the subject.
  const server = new URL(config.smtpUrl);
  const outcomes = await Promise.allSettled(
    mails.map((mail) =>
      inSpan(
        'smtp send',
        {
          kind: SpanKind.CLIENT,
          attributes: { 'server.address': server.hostname, 'server.port': Number(server.port || 25) },
        },
        () =>
          smtpTransport(config.smtpUrl).sendMail({
            from: config.from,
            to: mail.to,
            subject: mail.subject,
            text: mail.text,
            ...(mail.html ? { html: mail.html } : {}),
            ...(mail.language ? { headers: { 'Content-Language': mail.language } } : {}),
          }),
      ),
    ),
  );
  const sent = mails.filter((_, index) => outcomes[index]?.status === 'fulfilled').map((mail) => mail.id);
  if (sent.length > 0) {
    await db
      .update(mailOutbox)
      .set({ status: 'sent', sentAt: clock(), nextAttemptAt: null, lastError: null })
      .where(inArray(mailOutbox.id, sent));
  }
  return mails.flatMap((mail, index) => {
    const outcome = outcomes[index];
    if (outcome?.status !== 'rejected') return [];
    const reason = outcome.reason as unknown;
    return [{ mail, error: reason instanceof Error ? reason.message : String(reason) }];
  });
}

/**
 * Sends claimed mails: over SMTP when SMTP_URL is set, otherwise into the dev mailbox; a test-mode
 * case's mails always go to the dev mailbox, never out. A failure is written on its row: queued
 * again for its retry (the delay doubling each time), or after the last retry `failed`, visible
 * rather than silently dropped.
 */
async function sendClaimedMails(deps: MailSenderDeps, mails: StoredMail[]): Promise<void> {
  const { db, clock, transport } = deps;
  const smtpUrl = transport.smtpUrl;
  const outgoing = smtpUrl ? mails.filter((mail) => mail.livemode) : [];
  const kept = smtpUrl ? mails.filter((mail) => !mail.livemode) : mails;
  let failures: MailFailure[];
  try {
    if (kept.length > 0) await storeInDevMailbox(db, kept, clock());
    failures =
      smtpUrl && outgoing.length > 0
        ? await sendOverSmtp(db, outgoing, { ...transport, smtpUrl }, clock)
        : [];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    failures = mails.map((mail) => ({ mail, error: message }));
  }
  for (const { mail, error } of failures) {
    const retriesLeft = mail.attempts <= MAIL_RETRY_LIMIT;
    const delayMs = Math.min(deps.retryDelaySeconds * 1000 * 2 ** (mail.attempts - 1), MAX_RETRY_DELAY_MS);
    await db
      .update(mailOutbox)
      .set({
        status: retriesLeft ? 'queued' : 'failed',
        lastError: error,
        nextAttemptAt: retriesLeft ? new Date(clock().getTime() + delayMs) : null,
      })
      .where(and(eq(mailOutbox.id, mail.id), eq(mailOutbox.status, 'queued')));
  }
}

/**
 * Sends every queued mail that is due, a batch at a time, until a batch comes back short. The
 * worker runs it on a one-second tick; mails are written with the change that causes them (the
 * outbox), so nothing per mail is queued anywhere else. Returns how many mails it took.
 */
export async function sendDueMails(deps: MailSenderDeps): Promise<number> {
  let taken = 0;
  for (;;) {
    const mails = await claimDueMails(deps.db, deps.clock(), MAIL_BATCH_SIZE);
    taken += mails.length;
    if (mails.length > 0) await sendClaimedMails(deps, mails);
    if (mails.length < MAIL_BATCH_SIZE) return taken;
  }
}

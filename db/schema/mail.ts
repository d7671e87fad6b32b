import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { MAIL_STATUSES, type MailStatus, oneOf } from './values';

/**
 * Every e-mail the service sends, written in the transaction that decides to send it. The worker
 * sends the queued ones that are due (server/mail/send-mail.ts); a mail that keeps failing stays
 * here as `failed` with its error.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: primaryUuid(),
    to: text('to').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html'),
    /** The BCP 47 tag of the language it is written in (its Content-Language), or null. */
    language: text('language'),
    /** A test-mode case's mail never leaves: it goes to the dev mailbox whatever SMTP_URL says. */
    livemode: livemode(),
    /** The case the mail is about (a subject's or manager's link), so redaction can erase it. */
    caseId: uuid('case_id'),
    status: text('status').$type<MailStatus>().notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    /**
     * When a queued mail is next due: null for a new mail (due at once), then the retry's time, or
     * the end of the lease of the worker sending it (a worker that dies mid-send leaves the mail
     * to be taken again when the lease ends).
     */
    nextAttemptAt: timestamptz('next_attempt_at'),
    createdAt: createdAt(),
    sentAt: timestamptz('sent_at'),
  },
  (t) => [
    check('mail_outbox_status_check', oneOf(t.status, MAIL_STATUSES)),
    index('mail_outbox_created_idx').on(t.createdAt),
    index('mail_outbox_case_idx').on(t.caseId),
    // The worker's poll: the queued mails, new ones (null) first, then by due time.
    index('mail_outbox_due_idx').on(t.nextAttemptAt.asc().nullsFirst()).where(sql`${t.status} = 'queued'`),
  ],
);

/**
 * Where mail goes when SMTP_URL is unset, and text messages when SMS_PROVIDER=dev (development):
 * the console lists it to owners and admins, so links can be clicked and codes read without a
 * mail server or a phone. Nothing here is ever written to the log.
 */
export const devMailbox = pgTable(
  'dev_mailbox',
  {
    id: primaryUuid(),
    /** An e-mail address, or for a text message the phone number (E.164). */
    to: text('to').notNull(),
    /** The case the mail or text message is about, so redaction can erase it. */
    caseId: uuid('case_id'),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html'),
    language: text('language'),
    createdAt: createdAt(),
  },
  (t) => [index('dev_mailbox_created_idx').on(t.createdAt), index('dev_mailbox_case_idx').on(t.caseId)],
);

import { eq, sql } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '@/db/client';
import { devMailbox, mailOutbox } from '@/db/schema';
import { logger } from '../lib/logger';

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

/**
 * Sends one stored mail: over SMTP when SMTP_URL is set, otherwise into the dev mailbox (and the
 * log). A failure is written on the row (attempts, last_error) and rethrown so the job retries;
 * after the last retry the row stays `failed`, visible rather than silently dropped.
 */
export async function sendStoredMail(
  db: Db,
  mailId: string,
  config: MailTransportConfig,
  isLastTry: boolean,
): Promise<void> {
  const [mail] = await db.select().from(mailOutbox).where(eq(mailOutbox.id, mailId));
  if (!mail || mail.status === 'sent') return;
  try {
    if (config.smtpUrl) {
      await smtpTransport(config.smtpUrl).sendMail({
        from: config.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html ? { html: mail.html } : {}),
      });
      await db
        .update(mailOutbox)
        .set({
          status: 'sent',
          sentAt: new Date(),
          attempts: sql`${mailOutbox.attempts} + 1`,
          lastError: null,
        })
        .where(eq(mailOutbox.id, mail.id));
    } else {
      await db.transaction(async (tx) => {
        await tx
          .insert(devMailbox)
          .values({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
        await tx
          .update(mailOutbox)
          .set({ status: 'sent', sentAt: new Date(), attempts: sql`${mailOutbox.attempts} + 1` })
          .where(eq(mailOutbox.id, mail.id));
      });
      logger.info('mail stored in the dev mailbox', { to: mail.to, subject: mail.subject, text: mail.text });
    }
  } catch (error) {
    await db
      .update(mailOutbox)
      .set({
        status: isLastTry ? 'failed' : 'queued',
        attempts: sql`${mailOutbox.attempts} + 1`,
        lastError: error instanceof Error ? error.message : String(error),
      })
      .where(eq(mailOutbox.id, mail.id));
    throw error;
  }
}

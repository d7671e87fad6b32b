import { sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { reusableQuery } from '@/db/reusable-query';
import { mailOutbox } from '@/db/schema';
import { randomUUID } from '@/server/platform/ids';
import { enqueueMailSend } from '@/server/platform/jobs/producers';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

const insertMail = reusableQuery((db) =>
  db
    .insert(mailOutbox)
    .values({
      id: sql.placeholder('id'),
      to: sql.placeholder('to'),
      subject: sql.placeholder('subject'),
      text: sql.placeholder('text'),
      html: sql.placeholder('html'),
    })
    .prepare('insert_mail'),
);

/**
 * The one way to send e-mail. The mail is stored and its sending job queued in the caller's
 * transaction, so it goes out exactly when the change that caused it commits; the `mail-send` job
 * delivers it (SMTP, or the dev mailbox when SMTP_URL is unset) and retries on failure.
 */
export async function enqueueMail(tx: Tx, mail: OutgoingMail): Promise<{ id: string }> {
  // The id is chosen here so the row and its job go out together (pipelined, one round trip).
  const id = randomUUID();
  await Promise.all([
    insertMail(tx).execute({
      id,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html ?? null,
    }),
    enqueueMailSend(tx, id),
  ]);
  return { id };
}

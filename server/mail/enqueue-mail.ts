import type { Tx } from '@/db/client';
import { mailOutbox } from '@/db/schema';
import { QUEUES } from '@/jobs/catalog';
import { enqueueJobs } from '@/jobs/enqueue';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * The one way to send e-mail. The mail is stored and its sending job queued in the caller's
 * transaction, so it goes out exactly when the change that caused it commits; the `mail-send` job
 * delivers it (SMTP, or the dev mailbox when SMTP_URL is unset) and retries on failure.
 */
export async function enqueueMail(tx: Tx, mail: OutgoingMail): Promise<{ id: string }> {
  const [row] = await tx
    .insert(mailOutbox)
    .values({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html ?? null })
    .returning({ id: mailOutbox.id });
  if (!row) throw new Error('mail insert returned nothing');
  await enqueueJobs(tx, QUEUES.mailSend, [{ data: { mailId: row.id } }]);
  return { id: row.id };
}

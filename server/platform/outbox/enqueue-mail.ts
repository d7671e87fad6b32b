import type { Tx } from '@/db/client';
import { newRowId } from '@/server/platform/ids';
import { insertMail } from './queries';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** False for a test-mode case's mail: it goes to the dev mailbox, never out. Default live. */
  livemode?: boolean;
  /** The case the mail is about: redacting the case erases the mail. */
  caseId?: string;
}

/**
 * The one way to send e-mail. The mail is stored in the caller's transaction, so it goes out
 * exactly when the change that caused it commits: the worker sends the outbox's queued mails
 * (SMTP, or the dev mailbox when SMTP_URL is unset) within about a second and retries failures
 * (server/mail/send-mail.ts). No job is queued per mail: the row is the job.
 */
export async function enqueueMail(tx: Tx, mail: OutgoingMail): Promise<{ id: string }> {
  const id = newRowId();
  await insertMail(tx).execute({
    id,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html ?? null,
    livemode: mail.livemode ?? true,
    caseId: mail.caseId ?? null,
  });
  return { id };
}

import type { Tx } from '@/db/client';
import { pipelined } from '@/db/pipeline';
import { randomUUID } from '@/server/platform/ids';
import { enqueueMailSend } from '@/server/platform/jobs/producers';
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
 * The one way to send e-mail. The mail is stored and its sending job queued in the caller's
 * transaction, so it goes out exactly when the change that caused it commits; the `mail-send` job
 * delivers it (SMTP, or the dev mailbox when SMTP_URL is unset) and retries on failure.
 */
export async function enqueueMail(tx: Tx, mail: OutgoingMail): Promise<{ id: string }> {
  // The id is chosen here so the row and its job go out together (one round trip).
  const id = randomUUID();
  await pipelined(
    () =>
      insertMail(tx).execute({
        id,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html ?? null,
        livemode: mail.livemode ?? true,
        caseId: mail.caseId ?? null,
      }),
    () => enqueueMailSend(tx, id),
  );
  return { id };
}

import type { Tx } from '@/db/client';
import { newRowId } from '@/server/platform/ids';
import { storableText } from '@/server/platform/storable-text';
import { insertMails, type NewMailRow } from './queries';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** The BCP 47 tag of the language it is written in: sent as its Content-Language. */
  language?: string;
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
 *
 * A mail quotes outside text (names, notes, a question, a vendor's reading of a document) that did
 * not all come through the API's check: it is stored as `storableText` makes it, since a NUL
 * would fail the insert and with it the change that sends the mail.
 */
export async function enqueueMail(tx: Tx, mail: OutgoingMail): Promise<{ id: string }> {
  const [queued] = await enqueueMails(tx, [mail]);
  if (!queued) throw new Error('mail insert returned nothing');
  return queued;
}

/** Several mails in one statement (a batch of cases). */
export async function enqueueMails(tx: Tx, mails: readonly OutgoingMail[]): Promise<Array<{ id: string }>> {
  const rows = mailRows(mails);
  if (rows.length > 0) await insertMails(tx).execute({ mails: JSON.stringify(rows) });
  return rows.map(({ id }) => ({ id }));
}

/** Mails as the outbox stores them (`insertMailsFrom`), each with its id chosen here. */
export function mailRows(mails: readonly OutgoingMail[]): NewMailRow[] {
  return mails.map((mail) => ({
    id: newRowId(),
    to: storableText(mail.to),
    subject: storableText(mail.subject),
    text: storableText(mail.text),
    html: mail.html === undefined ? null : storableText(mail.html),
    language: mail.language ?? null,
    livemode: mail.livemode ?? true,
    case_id: mail.caseId ?? null,
  }));
}

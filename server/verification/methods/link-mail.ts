import type { OutgoingMail } from '@/server/platform/outbox/enqueue-mail';

/** What the mails of a new case say about it. */
export interface NewCaseMailFacts {
  caseId: string;
  publicId: string;
  /** Where the subject's pages are served (VERIFY_URL_BASE): the links point there. */
  pageBase: string;
  /** A test-mode case's mails go to the dev mailbox only. */
  livemode: boolean;
  subjectEmail: string;
  subjectName: string | null;
  expiresAt: Date;
  manager: { name: string; email: string } | null;
  /** Sent again at the team's request: the mails say that the earlier link no longer works. */
  resent?: boolean;
}

/** A mailed method's mail, carrying its link (`url`); null when the case has no one to mail. */
export type LinkMail = (facts: NewCaseMailFacts, teamName: string, url: string) => OutgoingMail | null;

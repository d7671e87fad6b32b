import type { Tx } from '@/db/client';
import { verificationUrl } from '@/server/cases/wire';
import { enqueueMail, type OutgoingMail } from '@/server/platform/outbox/enqueue-mail';
import { newLinkToken } from './link-tokens';
import type { VerificationMethod } from './methods';

export function emailLinkUrl(publicId: string, token: string): string {
  return `${verificationUrl(publicId)}/email/${token}`;
}

export function managerLinkUrl(publicId: string, token: string): string {
  return `${verificationUrl(publicId)}/manager/${token}`;
}

/** The raw tokens of a new case's mailed links; only their hashes go into the steps' settings. */
export interface VerificationLinks {
  settings: Partial<Record<VerificationMethod, Record<string, string>>>;
  emailToken: string | null;
  managerToken: string | null;
}

/**
 * Mints the tokens of the links a new case mails (the subject's confirmation link when `email` is
 * requested, the manager's request when `manager` is), before the steps are inserted, so their
 * hashes are written with the steps rather than by a second statement.
 */
export function issueVerificationLinks(methods: VerificationMethod[]): VerificationLinks {
  const links: VerificationLinks = { settings: {}, emailToken: null, managerToken: null };
  if (methods.includes('email')) {
    const link = newLinkToken();
    links.emailToken = link.token;
    links.settings.email = { link_token_hash: link.hash };
  }
  if (methods.includes('manager')) {
    const link = newLinkToken();
    links.managerToken = link.token;
    links.settings.manager = { link_token_hash: link.hash };
  }
  return links;
}

/** What the mails of a new case say about it. */
export interface NewCaseMailFacts {
  caseId: string;
  publicId: string;
  /** A test-mode case's mails go to the dev mailbox only. */
  livemode: boolean;
  subjectEmail: string;
  subjectName: string | null;
  expiresAt: Date;
  manager: { name: string; email: string } | null;
  /** Sent again at the team's request: the mails say that the earlier link no longer works. */
  resent?: boolean;
}

/**
 * Queues the new case's mails inside the case's own transaction, so no mail leaves for a case that
 * did not commit. Each link carries its own token. The mails are queued together (pipelined on the
 * transaction's connection).
 */
export async function sendVerificationMails(
  tx: Tx,
  facts: NewCaseMailFacts,
  teamName: string,
  links: VerificationLinks,
): Promise<void> {
  const who = facts.subjectName ? `${facts.subjectName} (${facts.subjectEmail})` : facts.subjectEmail;
  const mails: OutgoingMail[] = [];

  if (links.emailToken) {
    mails.push({
      livemode: facts.livemode,
      caseId: facts.caseId,
      to: facts.subjectEmail,
      subject: `${teamName} asks you to verify your identity`,
      text: [
        `${teamName} uses Vouch to verify the identity of the people they work with.`,
        '',
        'Open this link to confirm your e-mail address and see the remaining steps, if any:',
        emailLinkUrl(facts.publicId, links.emailToken),
        '',
        `The link works once and expires on ${facts.expiresAt.toUTCString()}.`,
        ...(facts.resent ? ['This link replaces the one we sent earlier, which no longer works.'] : []),
        'If you did not expect this message, you can ignore it.',
      ].join('\n'),
    });
  }

  if (links.managerToken && facts.manager) {
    mails.push({
      livemode: facts.livemode,
      caseId: facts.caseId,
      to: facts.manager.email,
      subject: `Please confirm ${who} for ${teamName}`,
      text: [
        `Hello ${facts.manager.name},`,
        '',
        `${teamName} is verifying the identity of ${who} and named you as their manager.`,
        'Open this link to confirm that you know this person, or to decline:',
        managerLinkUrl(facts.publicId, links.managerToken),
        '',
        `The request expires on ${facts.expiresAt.toUTCString()}.`,
        ...(facts.resent ? ['This link replaces the one we sent earlier, which no longer works.'] : []),
      ].join('\n'),
    });
  }

  await Promise.all(mails.map((mail) => enqueueMail(tx, mail)));
}

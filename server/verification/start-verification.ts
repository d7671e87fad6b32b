import type { Tx } from '@/db/client';
import type { CaseRecord } from '../cases/case-record';
import { verificationUrl } from '../cases/wire';
import { enqueueMail } from '../mail/enqueue-mail';
import { newLinkToken } from './link-tokens';
import type { VerificationMethod } from './methods';
import { settingString } from './step-settings';

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

/**
 * Queues the new case's mails inside the case's own transaction, so no mail leaves for a case that
 * did not commit. Each link carries its own token.
 */
export async function sendVerificationMails(
  tx: Tx,
  record: CaseRecord,
  teamName: string,
  links: VerificationLinks,
): Promise<void> {
  const who = record.subjectName ? `${record.subjectName} (${record.subjectEmail})` : record.subjectEmail;

  if (links.emailToken) {
    await enqueueMail(tx, {
      to: record.subjectEmail,
      subject: `${teamName} asks you to verify your identity`,
      text: [
        `${teamName} uses Vouch to verify the identity of the people they work with.`,
        '',
        'Open this link to confirm your e-mail address and see the remaining steps, if any:',
        emailLinkUrl(record.publicId, links.emailToken),
        '',
        `The link works once and expires on ${record.expiresAt.toUTCString()}.`,
        'If you did not expect this message, you can ignore it.',
      ].join('\n'),
    });
  }

  const managerEmail = settingString(record, 'manager', 'manager_email');
  if (links.managerToken && managerEmail) {
    const managerName = settingString(record, 'manager', 'manager_name') ?? '';
    await enqueueMail(tx, {
      to: managerEmail,
      subject: `Please confirm ${who} for ${teamName}`,
      text: [
        `Hello ${managerName},`,
        '',
        `${teamName} is verifying the identity of ${who} and named you as their manager.`,
        'Open this link to confirm that you know this person, or to decline:',
        managerLinkUrl(record.publicId, links.managerToken),
        '',
        `The request expires on ${record.expiresAt.toUTCString()}.`,
      ].join('\n'),
    });
  }
}

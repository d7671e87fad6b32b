import { eq } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { teams } from '@/db/schema';
import type { CaseRecord } from '../cases/case-record';
import { verificationUrl } from '../cases/wire';
import { enqueueMail } from '../mail/enqueue-mail';
import { newLinkToken } from './link-tokens';
import { mergeStepSettings, settingString, stepOf } from './step-settings';

export function emailLinkUrl(publicId: string, token: string): string {
  return `${verificationUrl(publicId)}/email/${token}`;
}

export function managerLinkUrl(publicId: string, token: string): string {
  return `${verificationUrl(publicId)}/manager/${token}`;
}

/**
 * Sends what a new case needs sent, inside the case's own transaction (so no mail leaves for a
 * case that did not commit): the subject's confirmation link when `email` is requested, and the
 * manager's request when `manager` is. Each link carries its own token; only its hash is kept.
 */
export async function startVerification(tx: Tx, record: CaseRecord, now: Date): Promise<void> {
  const wantsEmail = stepOf(record, 'email') !== undefined;
  const managerEmail = settingString(record, 'manager', 'manager_email');
  if (!wantsEmail && !managerEmail) return;
  const [team] = await tx.select({ name: teams.name }).from(teams).where(eq(teams.id, record.teamId));
  const teamName = team?.name ?? 'Your organisation';
  const who = record.subjectName ? `${record.subjectName} (${record.subjectEmail})` : record.subjectEmail;

  if (wantsEmail) {
    const link = newLinkToken();
    await mergeStepSettings(tx, record.id, 'email', { link_token_hash: link.hash }, now);
    const url = emailLinkUrl(record.publicId, link.token);
    await enqueueMail(tx, {
      to: record.subjectEmail,
      subject: `${teamName} asks you to verify your identity`,
      text: [
        `${teamName} uses Vouch to verify the identity of the people they work with.`,
        '',
        'Open this link to confirm your e-mail address and see the remaining steps, if any:',
        url,
        '',
        `The link works once and expires on ${record.expiresAt.toUTCString()}.`,
        'If you did not expect this message, you can ignore it.',
      ].join('\n'),
    });
  }

  if (managerEmail) {
    const link = newLinkToken();
    await mergeStepSettings(tx, record.id, 'manager', { link_token_hash: link.hash }, now);
    const managerName = settingString(record, 'manager', 'manager_name') ?? '';
    await enqueueMail(tx, {
      to: managerEmail,
      subject: `Please confirm ${who} for ${teamName}`,
      text: [
        `Hello ${managerName},`,
        '',
        `${teamName} is verifying the identity of ${who} and named you as their manager.`,
        'Open this link to confirm that you know this person, or to decline:',
        managerLinkUrl(record.publicId, link.token),
        '',
        `The request expires on ${record.expiresAt.toUTCString()}.`,
      ].join('\n'),
    });
  }
}

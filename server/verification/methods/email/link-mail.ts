import type { LinkMail } from '@/server/verification/methods/link-mail';

/** The subject's mail: their link, which confirms the address and shows the remaining steps. */
export const emailLinkMail: LinkMail = (facts, teamName, url) => ({
  livemode: facts.livemode,
  caseId: facts.caseId,
  to: facts.subjectEmail,
  subject: `${teamName} asks you to verify your identity`,
  text: [
    `${teamName} uses Vouch to verify the identity of the people they work with.`,
    '',
    'Open this link to confirm your e-mail address and see the remaining steps, if any:',
    url,
    '',
    `The link works once and expires on ${facts.expiresAt.toUTCString()}.`,
    ...(facts.resent ? ['This link replaces the one we sent earlier, which no longer works.'] : []),
    'If you did not expect this message, you can ignore it.',
  ].join('\n'),
});

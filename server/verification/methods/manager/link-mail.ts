import type { LinkMail } from '@/server/verification/methods/link-mail';

/** The manager's mail: who asks to confirm whom, with the link to confirm or decline. */
export const managerLinkMail: LinkMail = (facts, teamName, url) => {
  if (!facts.manager) return null;
  const who = facts.subjectName ? `${facts.subjectName} (${facts.subjectEmail})` : facts.subjectEmail;
  return {
    livemode: facts.livemode,
    caseId: facts.caseId,
    to: facts.manager.email,
    subject: `Please confirm ${who} for ${teamName}`,
    text: [
      `Hello ${facts.manager.name},`,
      '',
      `${teamName} is verifying the identity of ${who} and named you as their manager.`,
      'Open this link to confirm that you know this person, or to decline:',
      url,
      '',
      `The request expires on ${facts.expiresAt.toUTCString()}.`,
      ...(facts.resent ? ['This link replaces the one we sent earlier, which no longer works.'] : []),
    ].join('\n'),
  };
};

import { writtenLocale } from '@/server/i18n/choose-locale';
import { translator } from '@/server/i18n/translator';
import { type LinkMail, linkMailParts } from '@/server/verification/methods/link-mail';

/**
 * The subject's mail, in the case's language (else the team's default): their link, which
 * confirms the address and shows the remaining steps.
 */
export const emailLinkMail: LinkMail = (facts, team, url) => {
  const t = translator(writtenLocale(facts.locale, team.defaultLocale, facts.defaultLocale));
  return {
    livemode: facts.livemode,
    caseId: facts.caseId,
    to: facts.subjectEmail,
    ...linkMailParts(t, team, facts.pageBase, {
      subject: t.text('mail.subjectLink.subject', { team: team.name }),
      before: [t.text('mail.subjectLink.intro', { team: team.name }), t.text('mail.subjectLink.action')],
      button: t.text('mail.subjectLink.button'),
      url,
      after: [
        t.text('mail.subjectLink.expiry', { expires: facts.expiresAt }),
        ...(facts.resent ? [t.text('mail.resent')] : []),
        t.text('mail.subjectLink.ignore'),
      ],
    }),
  };
};

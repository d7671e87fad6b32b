import { writtenLocale } from '@/server/i18n/choose-locale';
import { translator } from '@/server/i18n/translator';
import { type LinkMail, linkMailParts } from '@/server/verification/methods/link-mail';

/**
 * The manager's mail: who asks to confirm whom, with the link to confirm or decline. The manager
 * is not the person the case's language was chosen for: it is written in the team's default.
 */
export const managerLinkMail: LinkMail = (facts, team, url) => {
  if (!facts.manager) return null;
  const t = translator(writtenLocale(null, team.defaultLocale, facts.defaultLocale));
  const person = facts.subjectName
    ? t.text('person.withEmail', { name: facts.subjectName, email: facts.subjectEmail })
    : facts.subjectEmail;
  return {
    livemode: facts.livemode,
    caseId: facts.caseId,
    to: facts.manager.email,
    ...linkMailParts(t, team, facts.pageBase, {
      subject: t.text('mail.managerLink.subject', { person, team: team.name }),
      before: [
        facts.manager.name
          ? t.text('mail.managerLink.greeting', { name: facts.manager.name })
          : t.text('mail.managerLink.greetingUnnamed'),
        t.text('mail.managerLink.intro', { team: team.name, person }),
        t.text('mail.managerLink.action'),
      ],
      button: t.text('mail.managerLink.button'),
      url,
      after: [
        t.text('mail.managerLink.expiry', { expires: facts.expiresAt }),
        ...(facts.resent ? [t.text('mail.resent')] : []),
      ],
    }),
  };
};

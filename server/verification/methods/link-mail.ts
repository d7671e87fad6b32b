import type { Locale } from '@/server/i18n/supported-locales';
import type { MessageLocale, Translator } from '@/server/i18n/translator';
import { html } from '@/server/platform/html';
import type { OutgoingMail } from '@/server/platform/outbox/enqueue-mail';
import type { TeamPresentation } from '@/server/teams/presentation';

/** What the mails of a new case say about it. */
export interface NewCaseMailFacts {
  caseId: string;
  publicId: string;
  /** Where the subject's pages are served (VERIFY_URL_BASE): the links (and the logo) point there. */
  pageBase: string;
  /** A test-mode case's mails go to the dev mailbox only. */
  livemode: boolean;
  subjectEmail: string;
  subjectName: string | null;
  expiresAt: Date;
  manager: { name: string; email: string } | null;
  /** The case's locale: the subject's mail is written in it (else the team's default). */
  locale: Locale | null;
  /** DEFAULT_LOCALE: the language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
  /** Sent again at the team's request: the mails say that the earlier link no longer works. */
  resent?: boolean;
}

/** A mailed method's mail, carrying its link (`url`); null when the case has no one to mail. */
export type LinkMail = (facts: NewCaseMailFacts, team: TeamPresentation, url: string) => OutgoingMail | null;

/** Vouch's own blue: the button's colour when the team has not set one. */
const DEFAULT_COLOR = '#1f4fd1';

/** A link mail's words, in the order they are read: the link's button sits after `before`. */
export interface LinkMailContent {
  subject: string;
  before: string[];
  button: string;
  url: string;
  after: string[];
}

/**
 * A link mail in its reader's language, as a plain part and an HTML part carrying the team's brand
 * (logo, colour, support line). The HTML is styled inline and laid out for narrow screens, as mail
 * clients need, and sets its language and direction; the logo is fetched from our origin.
 */
export function linkMailParts(
  t: Translator,
  team: TeamPresentation,
  pageBase: string,
  content: LinkMailContent,
): Pick<OutgoingMail, 'subject' | 'text' | 'html' | 'language'> {
  const footer = [team.supportLine, t.text('mail.footer', { team: team.name })].filter(
    (line): line is string => Boolean(line),
  );
  // Paragraphs apart, the link on a line of its own after the one that says what it does, and
  // the footer after the conventional signature separator.
  const text = [
    content.before.join('\n\n'),
    content.url,
    '',
    content.after.join('\n'),
    '',
    '-- ',
    footer.join('\n'),
  ].join('\n');
  const color = team.color ?? DEFAULT_COLOR;
  const paragraph = (line: string) => html`<p style="margin:0 0 16px">${line}</p>`;
  const body = html`<!DOCTYPE html>
<html lang="${t.lang}" dir="${t.dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${content.subject}</title></head>
<body style="margin:0;padding:0;background:#f5f6f8;color:#14171f;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div style="max-width:560px;margin:0 auto;padding:24px 16px">
<div style="background:#ffffff;border:1px solid #c9ced8;border-radius:8px;padding:24px">
${team.logoPath ? html`<p style="margin:0 0 16px"><img src="${pageBase}${team.logoPath}" alt="${t.text('page.logoAlt', { team: team.name })}" style="max-height:48px;max-width:200px;border:0"></p>` : ''}
${content.before.map(paragraph)}
<p style="margin:24px 0"><a href="${content.url}" style="display:inline-block;background:${color};color:#ffffff;text-decoration:none;font-weight:600;padding:12px 20px;border-radius:6px">${content.button}</a></p>
<p style="margin:0 0 16px;font-size:14px;color:#4a5163">${t.text('mail.linkFallback')}<br><a href="${content.url}" style="color:${color};word-break:break-all">${content.url}</a></p>
${content.after.map(paragraph)}
</div>
<div style="padding:16px 8px;font-size:14px;color:#4a5163">${footer.map(paragraph)}</div>
</div></body></html>`;
  return { subject: content.subject, text, html: body.value, language: t.lang };
}

import type { Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { verificationUrl } from '@/server/cases/case-record';
import { enqueueMails, type OutgoingMail } from '@/server/platform/outbox/enqueue-mail';
import type { TeamPresentation } from '@/server/teams/presentation';
import { newLinkToken } from './link-tokens';
import type { NewCaseMailFacts } from './methods/link-mail';
import { MODULE_BY_KEY } from './methods/modules';
import { MAILED_METHODS, type MailedMethod } from './methods/registry';

/** A mailed link: the case's page, the method's path, its token (`/v/<public id>/<method>/<token>`). */
export function methodLinkUrl(
  pageBase: string,
  publicId: string,
  method: MailedMethod,
  token: string,
): string {
  return `${verificationUrl(pageBase, publicId)}/${method}/${token}`;
}

/** The raw tokens of a case's mailed links; only their hashes go into the steps' settings. */
export interface VerificationLinks {
  settings: Partial<Record<VerificationMethod, Record<string, string>>>;
  tokens: Partial<Record<MailedMethod, string>>;
}

/**
 * Mints a token for the link of each mailed method among `methods`, before the steps are
 * inserted, so their hashes are written with the steps rather than by a second statement.
 */
export function issueVerificationLinks(methods: readonly VerificationMethod[]): VerificationLinks {
  const links: VerificationLinks = { settings: {}, tokens: {} };
  for (const method of MAILED_METHODS) {
    if (!methods.includes(method)) continue;
    const link = newLinkToken();
    links.tokens[method] = link.token;
    links.settings[method] = { link_token_hash: link.hash };
  }
  return links;
}

/**
 * Queues the case's mails inside the case's own transaction, so no mail leaves for a case that
 * did not commit. Each link carries its own token. The mails are queued together (pipelined on the
 * transaction's connection).
 */
export async function sendVerificationMails(
  tx: Tx,
  facts: NewCaseMailFacts,
  team: TeamPresentation,
  links: VerificationLinks,
): Promise<void> {
  await enqueueMails(tx, verificationMails(facts, team, links));
}

/** The subject's and the manager's link mails of a case, as sendVerificationMails queues them. */
export function verificationMails(
  facts: NewCaseMailFacts,
  team: TeamPresentation,
  links: VerificationLinks,
): OutgoingMail[] {
  return MAILED_METHODS.flatMap((method) => {
    // Each method that mails a link (the registry's `mailsLinkTo`) sends its module's mail.
    const token = links.tokens[method];
    const linkMail = MODULE_BY_KEY[method].linkMail;
    const mail =
      token && linkMail
        ? linkMail(facts, team, methodLinkUrl(facts.pageBase, facts.publicId, method, token))
        : null;
    return mail ? [mail] : [];
  });
}

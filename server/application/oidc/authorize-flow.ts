import type { Db } from '@/db/client';
import type { AnswerHashingBudget } from '@/server/application/answer-hashing';
import { openAuditedCase } from '@/server/application/cases/open-case';
import type { AuditActor } from '@/server/audit/record-audit';
import type { MessageLocale } from '@/server/i18n/translator';
import {
  attachCase,
  flowBeginUrl,
  flowIdOf,
  type PushedRequest,
  pushedRequest,
  relyingPartyRedirect,
  spendRequest,
} from '@/server/oidc/flows';
import { findClient } from '@/server/oidc/oidc-clients';
import { requestedClaim } from '@/server/oidc/verified-claims-request';
import type { Clock } from '@/server/platform/clock';
import { appErrorIn } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { errorFields, logger } from '@/server/platform/logger';
import { type ExpectedNames, expectedNamesSettings } from '@/server/verification/methods/government-id/names';

/** The names the pushed request holds, which the document must show (PAR required both). */
function expectedNames(request: PushedRequest): ExpectedNames {
  const given = requestedClaim(request.verifiedClaims, 'given_name');
  const family = requestedClaim(request.verifiedClaims, 'family_name');
  return {
    given: given?.value ?? '',
    family: family?.value ?? '',
    fuzzy: Boolean(given?.fuzzy && family?.fuzzy),
  };
}

/** How long a case an identity provider opened may take before it ends (`timeout`). */
export const IDP_CASE_SECONDS = 30 * 60;

export interface AuthorizeDeps {
  db: Db;
  clock: Clock;
  jobs: JobProducer;
  /** The team's budgets a case's opening spends from (an identity provider's has no answer to hash). */
  rateLimiters: AnswerHashingBudget;
  /** The provider's issuer (BASE_URL): the `iss` of its answers. */
  issuer: string;
  /** Where the subject's pages are served (VERIFY_URL_BASE). */
  pageBase: string;
  defaultLocale: MessageLocale;
}

/** What authorize answers: where to send the browser, or a page saying the link cannot be used. */
export type AuthorizeAnswer = { redirect: string } | { refused: 'unknown' | 'expired' };

/**
 * The browser arrives with a pushed request's `request_uri`: the request is spent (once: a second
 * use opens nothing), and a case opens for the person it names, from its template, in the
 * client's mode, charged, evented and audited like any case (the identity provider as its actor),
 * with `login_hint` as its external_ref and 30 minutes to finish; the browser goes straight into
 * the hosted flow. A case that cannot open (a trial ended, an allowance spent, the template gone)
 * sends the browser back to the relying party with `access_denied`, saying why.
 */
export async function authorizeFlow(
  deps: AuthorizeDeps,
  input: {
    requestUri: string;
    clientId: string | null;
    clientAddress: string | null;
    userAgent: string | null;
  },
): Promise<AuthorizeAnswer> {
  const now = deps.clock();
  const id = flowIdOf(input.requestUri);
  const flow = id ? await spendRequest(deps.db, id, input.clientId, now) : null;
  if (!flow) return { refused: 'unknown' };
  if (flow.requestExpiresAt <= now) return { refused: 'expired' };
  const client = await findClient(deps.db, flow.clientId);
  if (!client) return { refused: 'unknown' };
  const request = pushedRequest(flow);
  const actor: AuditActor = {
    userId: null,
    email: `${client.name} (identity provider ${client.id})`,
    ipAddress: input.clientAddress,
    userAgent: input.userAgent,
  };
  let binding = '';
  try {
    const opened = await openAuditedCase(
      {
        db: deps.db,
        teamId: client.teamId,
        actor,
        clock: deps.clock,
        jobs: deps.jobs,
        rateLimiters: deps.rateLimiters,
        scope: { teamId: client.teamId, livemode: client.livemode },
        caseTtlSeconds: IDP_CASE_SECONDS,
        pageBase: deps.pageBase,
        defaultLocale: deps.defaultLocale,
      },
      { subject_email: request.subjectEmail, locale: request.locale, template: request.template, notes: '' },
      {
        externalRef: request.loginHint,
        stepSettings: expectedNamesSettings(expectedNames(request)),
        // The flow is attached and bound in the case's own transaction: the case never exists
        // without its flow (whose binding gates its pages), and a crash leaves neither.
        withCase: async (tx, record) => {
          binding = await attachCase(tx, flow.id, record.id);
        },
      },
    );
    // The browser goes in through a one-time link that binds the flow to it (a cookie on the
    // case's path): only it may take the case's steps and carry the verdict back.
    return { redirect: flowBeginUrl(deps.pageBase, opened.publicId, binding) };
  } catch (error) {
    // The request is spent: whatever went wrong, the browser goes back to the relying party
    // (its redirect URI is known good), never to a bare error it cannot leave.
    const refused = appErrorIn(error);
    if (refused && refused.appCode !== 'SERVICE_UNAVAILABLE' && refused.appCode !== 'INTERNAL_ERROR') {
      return {
        redirect: relyingPartyRedirect(request, deps.issuer, {
          error: 'access_denied',
          error_description: `The verification could not start: ${refused.detail}`,
        }),
      };
    }
    if (refused?.appCode !== 'SERVICE_UNAVAILABLE') logger.error('authorize failed', errorFields(error));
    return {
      redirect: relyingPartyRedirect(request, deps.issuer, {
        error: refused?.appCode === 'SERVICE_UNAVAILABLE' ? 'temporarily_unavailable' : 'server_error',
        error_description: 'The verification could not start; try again.',
      }),
    };
  }
}

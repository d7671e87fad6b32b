import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import type { CaseRecord } from '@/server/cases/case-record';
import type { MessageLocale } from '@/server/i18n/translator';
import type { DataScope } from '@/server/platform/data-scope';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { caseAudit } from './audit-entries';
import { cancelCase } from './cancel-case';
import { redactCase } from './redact-case';
import { type ResendLinksInput, resendLinks } from './resend-links';

/** Who acts on a case, for whom, and when: a console user or an API key, in a team and mode. */
export interface CaseActionContext extends TeamActionContext {
  scope: DataScope;
  rateLimiters: RateLimiters;
  /** Where the subject's pages are served (VERIFY_URL_BASE): resent links point there. */
  pageBase: string;
  /** DEFAULT_LOCALE: the mails' language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
}

/**
 * A team's actions on a case, each committed with its audit entry: the REST API and the console
 * publish the same three, whoever the actor.
 */
export const auditedCaseActions = {
  cancel: (ctx: CaseActionContext, caseId: string): Promise<CaseRecord> =>
    auditedChange(ctx, (tx) => cancelCase(tx, ctx.scope, caseId, ctx), caseAudit('case.canceled')),
  resend: (ctx: CaseActionContext, input: ResendLinksInput): Promise<CaseRecord> =>
    auditedChange(
      ctx,
      (tx) =>
        resendLinks(tx, ctx.scope, input, {
          clock: ctx.clock,
          limits: ctx.rateLimiters,
          pageBase: ctx.pageBase,
          defaultLocale: ctx.defaultLocale,
        }),
      caseAudit('case.links_resent'),
    ),
  redact: (ctx: CaseActionContext, caseId: string): Promise<CaseRecord> =>
    auditedChange(ctx, (tx) => redactCase(tx, ctx.scope, caseId, ctx), caseAudit('case.redacted')),
};

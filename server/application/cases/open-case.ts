import type { Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { type AnswerHashingBudget, withAnswerHashing } from '@/server/application/answer-hashing';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import type { CaseRecord } from '@/server/cases/case-record';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
import type { MessageLocale } from '@/server/i18n/translator';
import { runIdempotent } from '@/server/idempotency/run-idempotent';
import type { DataScope } from '@/server/platform/data-scope';
import { customAnswersIn } from '@/server/verification/methods/custom-question/create-input';
import { caseAudit } from './audit-entries';
import { createCase, createCaseAtOnce, type PreparedCase, prepareCase, teamCaseSources } from './create-case';
import { type CaseWire, type CreateCaseInput, toCaseWire } from './wire';

/** Who creates cases, in which team and mode, and with the operator's case settings. */
export interface CaseCreationContext extends TeamActionContext {
  scope: DataScope;
  caseTtlSeconds: number;
  /** Where the subject's pages are served (VERIFY_URL_BASE): the mailed links point there. */
  pageBase: string;
  /** DEFAULT_LOCALE: the mails' language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
}

/** Who opens a case from a body: its custom answer is hashed within the team's budget. */
export interface CaseOpeningContext extends CaseCreationContext {
  rateLimiters: AnswerHashingBudget;
}

/** A body prepared (template applied, answer hashed fairly: withAnswerHashing) for its creation. */
function prepareBody(ctx: CaseOpeningContext, input: CreateCaseInput): Promise<PreparedCase> {
  return withAnswerHashing(ctx.rateLimiters, ctx.teamId, customAnswersIn(input), (keepAnswer) =>
    prepareCase(input, teamCaseSources(ctx.db, ctx.scope), keepAnswer),
  );
}

function creationDeps(ctx: CaseCreationContext) {
  return {
    clock: ctx.clock,
    jobs: ctx.jobs,
    caseTtlSeconds: ctx.caseTtlSeconds,
    pageBase: ctx.pageBase,
    defaultLocale: ctx.defaultLocale,
  };
}

/**
 * A console user (the helpdesk's case) or an identity provider's flow opens a case: the same
 * rules, billing and events as the API's creation, committed with its audit entry.
 */
export async function openAuditedCase(
  ctx: CaseOpeningContext,
  input: CreateCaseInput,
  /**
   * What an identity provider's flow adds: who the case is about in its system (its login_hint),
   * and step settings beside the template's (the names the document must show).
   */
  extras: {
    externalRef?: string | null;
    stepSettings?: Partial<Record<VerificationMethod, Record<string, unknown>>>;
    /** What commits with the case, in its transaction (an identity provider's flow attaching it). */
    withCase?: (tx: Tx, record: CaseRecord) => Promise<void>;
  } = {},
): Promise<CaseRecord> {
  const prepared = await prepareBody(ctx, input);
  prepared.externalRef = extras.externalRef ?? null;
  for (const [method, settings] of Object.entries(extras.stepSettings ?? {})) {
    const key = method as VerificationMethod;
    if (prepared.methods.includes(key)) prepared.settings[key] = { ...prepared.settings[key], ...settings };
  }
  return auditedChange(
    ctx,
    async (tx) => {
      const record = await createCase(tx, ctx.scope, prepared, creationDeps(ctx));
      await extras.withCase?.(tx, record);
      return record;
    },
    caseAudit('case.created'),
  );
}

/**
 * An API key opens a case, with an optional Idempotency-Key: a repeat within 24 hours gets the
 * first answer again (`replayed`), and the creation is audited in the case's transaction (a replay
 * records nothing, and hashes nothing). A stored answer erased by its case's redaction is stood in
 * for by the case as it now is.
 */
export async function openIdempotentCase(
  ctx: CaseOpeningContext & { idempotencyKey: string | null },
  input: CreateCaseInput,
): Promise<{ body: CaseWire; replayed: boolean }> {
  const deps = { ...creationDeps(ctx), auditedAs: ctx.actor };
  if (ctx.idempotencyKey === null) {
    // Nothing to remember: the creation's fewest round trips (audited with the case's own writes).
    const { record } = await createCaseAtOnce(ctx.db, ctx.scope, await prepareBody(ctx, input), deps);
    return { body: toCaseWire(record, { now: ctx.clock(), pageBase: ctx.pageBase }), replayed: false };
  }
  const result = await runIdempotent<CaseWire, PreparedCase>(
    ctx.db,
    {
      ...ctx.scope,
      key: ctx.idempotencyKey,
      operation: 'cases.create',
      request: input,
      status: 201,
      casesOf: (created) => ({ caseId: created.id }),
    },
    ctx.clock,
    {
      prepare: () => prepareBody(ctx, input),
      commit: async (tx, prepared) => {
        // Audited with the case's own writes, in their round trip.
        const record = await createCase(tx, ctx.scope, prepared, deps);
        return toCaseWire(record, { now: ctx.clock(), pageBase: ctx.pageBase });
      },
    },
  );
  const body =
    result.body ??
    toCaseWire(await findTeamCaseOrFail(ctx.db, ctx.scope, result.caseId), {
      now: ctx.clock(),
      pageBase: ctx.pageBase,
    });
  return { body, replayed: result.replayed };
}

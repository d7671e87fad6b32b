import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '@/db/client';
import { cases } from '@/db/schema';
import type { CaseRecord } from '@/server/cases/case-record';
import { findTeamCaseOrFail, lockCaseForUpdate } from '@/server/cases/case-repository';
import { readTeamPresentation } from '@/server/cases/queries';
import type { MessageLocale } from '@/server/i18n/translator';
import type { Clock } from '@/server/platform/clock';
import { budgetKey, type DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { isActionable } from '@/server/verification/case-state';
import { managerContact } from '@/server/verification/methods/manager/contact';
import { MAILED_METHODS, type MailedMethod, METHOD_BY_KEY } from '@/server/verification/methods/registry';
import { issueVerificationLinks, sendVerificationMails } from '@/server/verification/start-verification';
import { mergeStepSettings } from '@/server/verification/step-settings';
import { caseIdInput } from './wire';

/** At most this many resends per case, and one per interval. */
export const RESEND_LIMITS = { perCase: 5, intervalSeconds: 60 } as const;

export const resendLinksInput = z.strictObject({
  id: caseIdInput.shape.id,
  methods: z
    .array(z.enum(MAILED_METHODS))
    .min(1, { error: 'list at least one method, or leave methods out to resend every link still unused' })
    .optional()
    .meta({
      description:
        'Which links to mail again: `email` (the subject’s link) and `manager` (the manager’s request). Leave it out to resend every one whose step is still to do.',
      examples: [['email']],
    }),
});

export type ResendLinksInput = z.infer<typeof resendLinksInput>;

function rateLimited(detail: string, retryAfterSeconds: number): AppError {
  return new AppError('RATE_LIMITED', detail, { 'Retry-After': String(Math.max(1, retryAfterSeconds)) });
}

/**
 * Mails the case's links again, each with a fresh token: the old links stop working the moment
 * this commits (only the new tokens' hashes are kept), so the subject or the manager can never be
 * offered a link that no longer works beside one that does. By default every step still waiting
 * for a mailed link; `methods` picks some. At most RESEND_LIMITS.perCase per case and one per
 * interval, and within the team's hourly and each address's daily budget (429 with Retry-After); an
 * ended case is 409 CASE_NOT_OPEN; a step already done is 409 STEP_NOT_PENDING.
 */
export async function resendLinks(
  db: Queryable,
  scope: DataScope,
  input: ResendLinksInput,
  deps: { clock: Clock; limits: RateLimiters; pageBase: string; defaultLocale: MessageLocale },
): Promise<CaseRecord> {
  const { clock, limits } = deps;
  const found = await findTeamCaseOrFail(db, scope, input.id);
  return db.transaction(async (tx) => {
    const now = clock();
    const record = await lockCaseForUpdate(tx, found.id);
    if (!record) throw new AppError('NOT_FOUND', 'No case with this id.');
    if (!isActionable(record, now)) throw new AppError('CASE_NOT_OPEN');

    const mailed = record.steps.filter((s) => (MAILED_METHODS as readonly string[]).includes(s.method));
    for (const method of input.methods ?? []) {
      const step = mailed.find((s) => s.method === method);
      if (!step) {
        throw new AppError('VALIDATION_ERROR', `methods: ${method} was not requested for this case`);
      }
      if (step.state !== 'pending') {
        throw new AppError(
          'STEP_NOT_PENDING',
          `The ${method} step is already done; its link is not sent again.`,
        );
      }
    }
    const methods = (input.methods ??
      mailed.filter((s) => s.state === 'pending').map((s) => s.method)) as MailedMethod[];
    if (methods.length === 0) {
      throw new AppError('STEP_NOT_PENDING', 'No step of this case is waiting for a mailed link.');
    }

    if (record.resendCount >= RESEND_LIMITS.perCase) {
      throw rateLimited(
        `The links of a case can be sent again at most ${RESEND_LIMITS.perCase} times; open a new case instead.`,
        Math.ceil((record.expiresAt.getTime() - now.getTime()) / 1000),
      );
    }
    const wait = record.lastResentAt
      ? RESEND_LIMITS.intervalSeconds - (now.getTime() - record.lastResentAt.getTime()) / 1000
      : 0;
    if (wait > 0) {
      throw rateLimited(
        `The links of a case can be sent again once a minute; retry in ${Math.ceil(wait)} s.`,
        Math.ceil(wait),
      );
    }

    const manager = managerContact(record);
    // Spent last, once the resend is sure to go out: a refused resend costs no budget. A live
    // address is counted across teams (it is one person's inbox); test mail never leaves, so test
    // mode counts apart, per team, as its API budgets do.
    const recipients = methods.map((method) =>
      METHOD_BY_KEY[method].mailsLinkTo === 'manager' ? manager?.email : record.subjectEmail,
    );
    await limits.consumeAll([
      ['resends_team', budgetKey(scope)],
      ...recipients.flatMap((address) =>
        address
          ? [['resends_recipient', scope.livemode ? address : `${budgetKey(scope)}:${address}`] as const]
          : [],
      ),
    ]);

    const links = issueVerificationLinks(methods);
    for (const method of methods) {
      await mergeStepSettings(tx, record.id, method, links.settings[method] ?? {}, now);
    }
    await tx
      .update(cases)
      .set({ resendCount: sql`${cases.resendCount} + 1`, lastResentAt: now, updatedAt: now })
      .where(eq(cases.id, record.id));
    await sendVerificationMails(
      tx,
      {
        caseId: record.id,
        publicId: record.publicId,
        pageBase: deps.pageBase,
        defaultLocale: deps.defaultLocale,
        livemode: record.livemode,
        subjectEmail: record.subjectEmail,
        subjectName: record.subjectName,
        locale: record.locale,
        expiresAt: record.expiresAt,
        manager,
        resent: true,
      },
      await readTeamPresentation(tx, record.teamId),
      links,
    );
    return {
      ...record,
      resendCount: record.resendCount + 1,
      lastResentAt: now,
      updatedAt: now,
    };
  });
}

import { z } from 'zod';
import type { Db } from '@/db/client';
import { VERIFICATION_METHODS, type VerificationMethod } from '@/db/schema';
import type { CaseRecord } from '@/server/cases/case-record';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { requiredText } from '@/server/platform/wire-fields';
import { completeSteps, expireCase, failCase, type TransitionResult } from '@/server/verification/case-state';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import { expectedNamesOf } from '@/server/verification/methods/government-id/names';
import { passIdentity } from '@/server/verification/methods/government-id/step';
import { MODULE_BY_KEY } from '@/server/verification/methods/modules';
import {
  FAILURE_REASONS,
  type FailureReason,
  METHOD_BY_KEY,
  stepsPassingTogether,
} from '@/server/verification/methods/registry';
import { caseIdInput } from './wire';

export const SIMULATION_ACTIONS = ['complete_step', 'fail_step', 'expire'] as const;

/**
 * `POST /v1/cases/{id}/simulate/`. Flat rather than a union per action, so the OpenAPI document
 * shows one plain body; which fields an action needs is checked below, with messages that say so.
 */
export const simulateCaseInput = z.strictObject({
  id: caseIdInput.shape.id,
  action: z.enum(SIMULATION_ACTIONS).meta({
    description:
      'What happens, as if the subject did it: `complete_step` passes `method`, `fail_step` fails it (which ends the case as `failed`), `expire` ends the case as if its time ran out.',
    examples: ['complete_step'],
  }),
  method: z
    .enum(VERIFICATION_METHODS)
    .optional()
    .meta({
      description:
        'With complete_step and fail_step: the step, one the case requested. Completing `government_id` or `selfie` passes both, as on the page.',
      examples: ['email'],
    }),
  failure_reason: z
    .enum(FAILURE_REASONS)
    .optional()
    .meta({
      description: "fail_step only: why the case failed; by default the method's own reason.",
      examples: ['manager_declined'],
    }),
  document: z
    .strictObject({
      given_name: requiredText(200).meta({
        description: 'The given name the document shows.',
        examples: ['Ada'],
      }),
      family_name: requiredText(200).meta({
        description: 'The family name the document shows.',
        examples: ['Lovelace'],
      }),
    })
    .optional()
    .meta({
      description:
        'complete_step of `government_id` (or `selfie`) only: the names the simulated document shows. They are compared with the names the case expects (an identity provider’s, else `subject_name`): other names fail the case with `name_mismatch` unless its `name_match` is `record`. Without it, the document shows the names expected.',
      examples: [{ given_name: 'Ada', family_name: 'Lovelace' }],
    }),
});

export type SimulateCaseInput = z.infer<typeof simulateCaseInput>;

/**
 * Drives a test-mode case through the same state machine as the subject's pages, so the same
 * events and webhooks follow: complete a step, fail a step (with a reason), or expire the case.
 * Live cases are refused (TEST_MODE_ONLY); an ended case is a 409 CASE_NOT_OPEN.
 */
export async function simulateCase(
  db: Db,
  scope: DataScope,
  input: SimulateCaseInput,
  deps: { clock: Clock; jobs: JobProducer },
): Promise<CaseRecord> {
  const found = await findTeamCaseOrFail(db, scope, input.id);
  if (found.livemode) throw new AppError('TEST_MODE_ONLY');

  const { action, method } = input;
  // The ID check passes the document and the selfie together: completing either is its pass.
  const passesIdentity =
    method !== undefined &&
    [governmentIdMethod.key, ...governmentIdMethod.passesWith].some((passed) => passed === method);
  if (input.document !== undefined && (action !== 'complete_step' || !passesIdentity)) {
    throw new AppError(
      'VALIDATION_ERROR',
      'document: only complete_step of the government_id (or selfie) step takes a document',
    );
  }
  if (action !== 'fail_step' && input.failure_reason !== undefined) {
    throw new AppError('VALIDATION_ERROR', 'failure_reason: only fail_step takes a failure_reason');
  }
  if (action === 'expire' && method !== undefined) {
    throw new AppError('VALIDATION_ERROR', 'method: expire ends the whole case and takes no method');
  }
  if (action !== 'expire') {
    if (!method) throw new AppError('VALIDATION_ERROR', `method: required for ${action}`);
    if (!found.steps.some((s) => s.method === method)) {
      const requested = found.steps.map((s) => s.method).join(', ');
      throw new AppError(
        'VALIDATION_ERROR',
        `method: ${method} was not requested for this case (it has ${requested})`,
      );
    }
  }
  const reason =
    action === 'fail_step' && method
      ? (input.failure_reason ?? METHOD_BY_KEY[method].failureReason ?? undefined)
      : undefined;
  if (action === 'fail_step' && !reason) {
    throw new AppError('VALIDATION_ERROR', `failure_reason: required to fail the ${method} step`);
  }

  const { jobs } = deps;
  const now = deps.clock();
  const result: TransitionResult = await db.transaction((tx) => {
    if (action === 'expire') return expireCase(tx, jobs, found.id, now, 'timeout');
    const step = method as VerificationMethod;
    if (
      action === 'complete_step' &&
      passesIdentity &&
      found.steps.some((s) => s.method === governmentIdMethod.key)
    ) {
      // As the ID check's pass: with the names the document shows, unless given those the case
      // expects (an identity provider's, else its subject_name as given), so it passes.
      const expected = expectedNamesOf(
        found.steps.find((s) => s.method === governmentIdMethod.key)?.settings,
      );
      const names = input.document
        ? { given: input.document.given_name, family: input.document.family_name }
        : expected;
      const name = names ? `${names.given} ${names.family}` : found.subjectName;
      return passIdentity(tx, jobs, found.id, { name, names }, now);
    }
    const simulateCompletion = MODULE_BY_KEY[step].simulateCompletion;
    if (action === 'complete_step' && simulateCompletion) return simulateCompletion(tx, jobs, found, now);
    if (action === 'complete_step')
      return completeSteps(
        tx,
        jobs,
        found.id,
        stepsPassingTogether(
          found.steps.map((s) => s.method),
          step,
        ),
        now,
      );
    return failCase(tx, jobs, found.id, step, reason as FailureReason, now);
  });
  if (result.changed) return result.record;
  if (result.why === 'not_open') throw new AppError('CASE_NOT_OPEN');
  if (result.why === 'step_not_pending') {
    throw new AppError('STEP_NOT_PENDING', `The ${method} step has already been completed or failed.`);
  }
  throw new AppError('NOT_FOUND', 'No case with this id.');
}

import { z } from 'zod';
import { CASE_STATUSES, VERIFICATION_METHODS, type VerificationMethod } from '@/db/schema';
import { env } from '@/server/platform/env';
import type { CaseRecord, CaseStatus } from './case-record';

/**
 * A JSON boolean and nothing else. trpc-to-openapi switches `z.boolean()` inputs to coercion on
 * the first REST request (so `"false"` would read as true); a literal union is left alone.
 */
export const jsonBoolean = z.union([z.literal(true), z.literal(false)], { error: 'must be true or false' });

const email = z.email().max(254);
const requiredText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });

export const createCaseInput = z
  .strictObject({
    subject_email: email,
    subject_name: requiredText(200).nullish(),
    // A record (not an object) so that coercion is never applied and unknown keys are refused.
    verification_methods: z
      .partialRecord(z.enum(VERIFICATION_METHODS), jsonBoolean, {
        error: (issue) =>
          issue.code === 'invalid_type' && issue.input !== undefined
            ? 'must be an object naming each method to request, such as {"email": true, "sms": true}'
            : undefined,
      })
      // Only when the methods are otherwise right: after a misspelt method, "at least one must be
      // true" would send the client looking for a second mistake.
      .refine((methods) => Object.values(methods).some((v) => v === true), {
        error: 'request at least one method, such as {"email": true}',
        when: (payload) => payload.issues.length === 0,
      }),
    notes: z.string().max(2000, { error: 'must be at most 2000 characters' }).default(''),
    custom_question_text: requiredText(500).optional(),
    custom_question_answer: requiredText(200).optional(),
    manager_name: requiredText(200).optional(),
    manager_email: email.optional(),
  })
  .superRefine(
    (body, ctx) => {
      const methods = body.verification_methods;
      const dependents = [
        ['custom_question', ['custom_question_text', 'custom_question_answer']],
        ['manager', ['manager_name', 'manager_email']],
      ] as const;
      for (const [method, fields] of dependents) {
        for (const field of fields) {
          if (methods[method] === true && body[field] === undefined) {
            ctx.addIssue({ code: 'custom', path: [field], message: `required when ${method} is requested` });
          }
          if (methods[method] !== true && body[field] !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [field],
              message: `only accepted when ${method} is requested`,
            });
          }
        }
      }
    },
    // Which fields go with which method is only worth saying once the methods themselves are right
    // (and the body is an object at all).
    {
      when: (payload) =>
        !payload.issues.some((issue) =>
          issue.path?.length ? issue.path[0] === 'verification_methods' : issue.code === 'invalid_type',
        ),
    },
  );

export type CreateCaseInput = z.infer<typeof createCaseInput>;

const isoDateTime = z.iso.datetime({ offset: true });

export const listCasesInput = z.strictObject({
  status: z.enum(CASE_STATUSES).optional(),
  subject_email: z.string().max(254).optional(),
  created_after: isoDateTime.optional(),
  created_before: isoDateTime.optional(),
  cursor: z.string().max(200).optional(),
});

export type ListCasesInput = z.infer<typeof listCasesInput>;

const methodState = { requested: z.boolean(), verified: z.boolean() };

export const caseOutput = z
  .object({
    id: z.uuid(),
    public_id: z.string(),
    status: z.enum(CASE_STATUSES),
    subject_email: z.string(),
    subject_name: z.string().nullable(),
    created_at: z.string(),
    expires_at: z.string(),
    is_expired: z.boolean(),
    verification_url: z.string(),
    verification_methods: z.object({
      email: z.object(methodState),
      sms: z.object({ ...methodState, phone_last4: z.string().nullable() }),
      government_id: z.object(methodState),
      selfie: z.object(methodState),
      custom_question: z.object({ ...methodState, question: z.string().nullable() }),
      manager: z.object({
        ...methodState,
        manager_name: z.string().nullable(),
        manager_email: z.string().nullable(),
      }),
    }),
    notes: z.string(),
    failure_reason: z.string().nullable(),
    livemode: z.boolean().meta({ description: 'False for a case made with a test key (`vouch_test_…`).' }),
    canceled_at: z
      .string()
      .nullable()
      .meta({ description: 'When the team canceled the case (its status is then `expired`).' }),
    redacted_at: z.string().nullable().meta({
      description:
        'When the subject’s personal data was erased (`POST /v1/cases/{id}/redact/`); the status, ids and results stay.',
    }),
  })
  .meta({ id: 'Case' });

export type CaseWire = z.infer<typeof caseOutput>;

export const caseListOutput = z
  .object({
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(caseOutput),
  })
  .meta({ id: 'CaseList' });

export function verificationUrl(publicId: string): string {
  return `${env().VERIFY_URL_BASE}/v/${publicId}`;
}

/** The status a client sees: an open case past its deadline is already expired. */
export function effectiveStatus(record: CaseRecord, now: Date): CaseStatus {
  if (record.status === 'open' && record.expiresAt <= now) return 'expired';
  return record.status;
}

export function toCaseWire(record: CaseRecord, now: Date): CaseWire {
  const step = (m: VerificationMethod) => record.steps.find((s) => s.method === m);
  const state = (m: VerificationMethod) => ({
    requested: step(m) !== undefined,
    verified: step(m)?.state === 'verified',
  });
  const setting = (m: VerificationMethod, key: string): string | null => {
    const value = step(m)?.settings[key];
    return typeof value === 'string' ? value : null;
  };
  const status = effectiveStatus(record, now);
  return {
    id: record.id,
    public_id: record.publicId,
    status,
    subject_email: record.subjectEmail,
    subject_name: record.subjectName,
    created_at: record.createdAt.toISOString(),
    expires_at: record.expiresAt.toISOString(),
    is_expired: status === 'expired',
    verification_url: verificationUrl(record.publicId),
    verification_methods: {
      email: state('email'),
      sms: { ...state('sms'), phone_last4: setting('sms', 'phone_last4') },
      government_id: state('government_id'),
      selfie: state('selfie'),
      custom_question: { ...state('custom_question'), question: setting('custom_question', 'question') },
      manager: {
        ...state('manager'),
        manager_name: setting('manager', 'manager_name'),
        manager_email: setting('manager', 'manager_email'),
      },
    },
    notes: record.notes,
    failure_reason: record.failureReason,
    livemode: record.livemode,
    canceled_at: record.canceledAt?.toISOString() ?? null,
    redacted_at: record.redactedAt?.toISOString() ?? null,
  };
}

import { z } from 'zod';
import { CASE_STATUSES, VERIFICATION_METHODS } from '@/db/schema';
import { EXPIRY_REASONS } from '@/server/cases/case-event-data';
import { EXAMPLE_CASE } from '@/server/cases/example-case';
import { EVENT_ID_PREFIX } from '@/server/platform/ids';
import { SUBSCRIBABLE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { cursorInput, pageLinks } from '@/server/platform/pagination';
import { createdRange } from '@/server/platform/wire-fields';
import { EXAMPLE_ENDPOINT_ID } from '@/server/webhooks/wire';

/** What an event may be filtered by: its type (a case's, a passkey's, or `ping`), its case, its time. */
export const EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, 'ping'] as const;

/** A sample passkey id, the same wherever the document shows one. */
export const EXAMPLE_PASSKEY_ID = '01946b2a-8d1f-7e52-8b3c-4d5e6f7a8b9c';

/** A sample event id, the same wherever the document shows one. */
export const EXAMPLE_EVENT_ID = 'evt_01946b2a-7c3e-7d41-9a2b-3c4d5e6f7a8b';

/** `data` of a case event, as the document's examples show it. */
const EXAMPLE_EVENT_DATA = {
  case_id: EXAMPLE_CASE.id,
  public_id: EXAMPLE_CASE.publicId,
  subject_email: EXAMPLE_CASE.subjectEmail,
  status: 'open',
  created_at: EXAMPLE_CASE.createdAt,
};

export const listEventsInput = z.strictObject({
  type: z
    .enum(EVENT_TYPES)
    .meta({ description: 'Only events of this type.', examples: ['case.closed'] })
    .optional(),
  case_id: z
    .uuid({ error: 'must be a case id (a UUID)' })
    .meta({ description: 'Only the events of this case (its `id`).', examples: [EXAMPLE_CASE.id] })
    .optional(),
  ...createdRange,
  cursor: cursorInput,
});

/** The `{id}` of the event route. */
export const eventIdInput = z.object({
  id: z.string().meta({
    description: 'The event’s id (`evt_…`): the `id` of its envelope, as delivered.',
    examples: [EXAMPLE_EVENT_ID],
  }),
});

export type ListEventsInput = z.infer<typeof listEventsInput>;

/** The envelope exactly as deliveries carry it: id, type, created_at, livemode, data. */
export const eventOutput = z
  .object({
    id: z.string().startsWith(EVENT_ID_PREFIX),
    type: z.enum(EVENT_TYPES),
    created_at: z.string(),
    livemode: z.boolean(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

export const eventListOutput = z
  .object({
    ...pageLinks('/v1/events/'),
    results: z.array(eventOutput).meta({
      description: 'Up to 50 events, newest first: each envelope exactly as its deliveries carried it.',
      examples: [
        [
          {
            id: EXAMPLE_EVENT_ID,
            type: 'case.closed',
            created_at: EXAMPLE_CASE.createdAt,
            livemode: true,
            data: { ...EXAMPLE_EVENT_DATA, status: 'closed' },
          },
        ],
      ],
    }),
  })
  .meta({ id: 'EventList' });

const EVENT_ID = /^evt_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The row id behind an `evt_…` id, or null for anything else (answered like an unknown id). */
export function eventRowId(wireId: string): string | null {
  return EVENT_ID.exec(wireId)?.[1] ?? null;
}

const caseEventFields = {
  case_id: z.uuid().meta({ description: 'The case’s id.', examples: [EXAMPLE_CASE.id] }),
  public_id: z
    .string()
    .meta({ description: 'The id in the subject’s verification link.', examples: [EXAMPLE_CASE.publicId] }),
  subject_email: z.string().meta({
    description: 'The subject’s e-mail address (the redaction placeholder once the case is redacted).',
    examples: [EXAMPLE_CASE.subjectEmail],
  }),
  status: z
    .enum(CASE_STATUSES)
    .meta({ description: 'The case’s status once this happened.', examples: ['open'] }),
  created_at: z
    .string()
    .meta({ description: 'When the case was opened.', examples: [EXAMPLE_CASE.createdAt] }),
};

/** A passkey event's `data`: which passkey, the case that enrolled it, whose it is. */
const passkeyEventFields = {
  passkey_id: z.uuid().meta({ description: 'The passkey’s id.', examples: [EXAMPLE_PASSKEY_ID] }),
  case_id: z.uuid().meta({ description: 'The case that enrolled it.', examples: [EXAMPLE_CASE.id] }),
  subject_email: z.string().meta({
    description: 'Whose passkey it is (the redaction placeholder once that case is redacted).',
    examples: [EXAMPLE_CASE.subjectEmail],
  }),
};

const failureReason = z
  .string()
  .nullable()
  .meta({
    description:
      'Why the case failed: `government_id_rejected`, `selfie_rejected`, `manager_declined`, `custom_question_failed` or `sms_code_failed`.',
    examples: ['manager_declined'],
  });

/**
 * `data` of each event type, as caseEventData() and the test ping build it. Strict, so the
 * OpenAPI document's `webhooks` section (built from these) names every field a receiver gets.
 */
export const EVENT_DATA = {
  'case.created': z.strictObject(caseEventFields).meta({ description: 'A case was opened.' }),
  'case.closed': z
    .strictObject(caseEventFields)
    .meta({ description: 'Every step of a case passed: the subject is verified.' }),
  'case.failed': z
    .strictObject({ ...caseEventFields, failure_reason: failureReason })
    .meta({ description: 'A step failed for good; `failure_reason` says why.' }),
  'case.expired': z
    .strictObject({
      ...caseEventFields,
      reason: z.enum(EXPIRY_REASONS).meta({
        description: '`timeout`: the case ran out of time; `canceled`: the team canceled it.',
        examples: ['timeout'],
      }),
    })
    .meta({
      description:
        'The case ended before every step passed: it ran out of time (`reason`: `timeout`) or the team canceled it (`canceled`).',
    }),
  'verification.step_completed': z
    .strictObject({
      ...caseEventFields,
      method: z
        .enum(VERIFICATION_METHODS)
        .meta({ description: 'The step that passed.', examples: ['email'] }),
    })
    .meta({ description: 'One step (`method`) of a case passed.' }),
  'case.redacted': z
    .strictObject({
      ...caseEventFields,
      failure_reason: failureReason.optional().meta({
        description: 'For a case that had failed: why (as in `case.failed`).',
        examples: ['manager_declined'],
      }),
    })
    .meta({
      description:
        'The subject’s personal data was erased: `subject_email` is now the placeholder `redacted+<public_id>@redacted.invalid`.',
    }),
  'passkey.enrolled': z.strictObject(passkeyEventFields).meta({
    description:
      'The subject saved a passkey at the end of a verified case (`case_id`) that offered one: a later case with the method `passkey` can verify them by it alone.',
  }),
  'passkey.revoked': z.strictObject(passkeyEventFields).meta({
    description: 'The team revoked a passkey (`DELETE /v1/passkeys/{id}/`): no case can use it any more.',
  }),
  ping: z
    .strictObject({
      endpoint_id: z.uuid().meta({ description: 'The endpoint pinged.', examples: [EXAMPLE_ENDPOINT_ID] }),
      message: z.literal('ping').meta({ description: 'Always `ping`.', examples: ['ping'] }),
    })
    .meta({ description: 'Sent to one endpoint by `POST /v1/webhooks/endpoints/{id}/test/`.' }),
} as const satisfies Record<(typeof EVENT_TYPES)[number], z.ZodType>;

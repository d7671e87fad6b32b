import { z } from 'zod';
import { CASE_STATUSES, VERIFICATION_METHODS } from '@/db/schema';
import { EXPIRY_REASONS } from '@/server/cases/case-event-data';
import { EVENT_ID_PREFIX } from '@/server/platform/ids';
import { CASE_EVENT_TYPES } from '@/server/platform/outbox/record-events';

/** What an event may be filtered by: its type (a case type, or `ping`), its case, its time. */
export const EVENT_TYPES = [...CASE_EVENT_TYPES, 'ping'] as const;

const isoDateTime = z.iso.datetime({ offset: true });

export const listEventsInput = z.strictObject({
  type: z.enum(EVENT_TYPES).optional(),
  case_id: z.uuid({ error: 'must be a case id (a UUID)' }).optional(),
  created_after: isoDateTime.optional(),
  created_before: isoDateTime.optional(),
  cursor: z.string().max(200).optional(),
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
  .object({ next: z.string().nullable(), previous: z.string().nullable(), results: z.array(eventOutput) })
  .meta({ id: 'EventList' });

const EVENT_ID = /^evt_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The row id behind an `evt_…` id, or null for anything else (answered like an unknown id). */
export function eventRowId(wireId: string): string | null {
  return EVENT_ID.exec(wireId)?.[1] ?? null;
}

const caseEventFields = {
  case_id: z.uuid(),
  public_id: z.string(),
  subject_email: z.string(),
  status: z.enum(CASE_STATUSES),
  created_at: z.string(),
};

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
    .strictObject({ ...caseEventFields, failure_reason: z.string().nullable() })
    .meta({ description: 'A step failed for good; `failure_reason` says why.' }),
  'case.expired': z.strictObject({ ...caseEventFields, reason: z.enum(EXPIRY_REASONS) }).meta({
    description:
      'The case ended before every step passed: it ran out of time (`reason`: `timeout`) or the team canceled it (`canceled`).',
  }),
  'verification.step_completed': z
    .strictObject({ ...caseEventFields, method: z.enum(VERIFICATION_METHODS) })
    .meta({ description: 'One step (`method`) of a case passed.' }),
  'case.redacted': z
    .strictObject({ ...caseEventFields, failure_reason: z.string().nullable().optional() })
    .meta({
      description:
        'The subject’s personal data was erased: `subject_email` is now the placeholder `redacted+<public_id>@redacted.invalid`.',
    }),
  ping: z
    .strictObject({ endpoint_id: z.uuid(), message: z.literal('ping') })
    .meta({ description: 'Sent to one endpoint by `POST /v1/webhooks/endpoints/{id}/test/`.' }),
} as const satisfies Record<(typeof EVENT_TYPES)[number], z.ZodType>;

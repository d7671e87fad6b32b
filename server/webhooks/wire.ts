import { z } from 'zod';
import {
  DELIVERY_STATUSES,
  type webhookAttempts,
  type webhookDeliveries,
  type webhookEndpoints,
} from '@/db/schema';
import { eventWireId } from '@/server/platform/ids';
import { SUBSCRIBABLE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { cursorInput, pageLinks } from '@/server/platform/pagination';
import { jsonBoolean } from '@/server/platform/wire-fields';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

/** Sample values the OpenAPI document shows, the same wherever they appear. */
export const EXAMPLE_ENDPOINT_ID = '5d0c2a8e-7b41-4f6a-a3e9-1c2b7d8e9f01';
const EXAMPLE_DELIVERY_ID = '01946b2a-7c3f-7a10-8b2c-4d5e6f7a8b9c';
const EXAMPLE_URL = 'https://hooks.acme.example/vouch';
const EXAMPLE_TIME = '2026-01-31T09:00:00.000Z';

const endpointFields = {
  url: z.string().meta({
    description:
      'Where each event is POSTed: HTTPS on port 443, to a host on the public internet. A private or loopback address, or a name only a local network knows (`localhost`, `*.local`, `*.internal`, `*.test`, a name without a dot), is refused with INVALID_URL: to receive events on your own machine, run `npm run listen`.',
    examples: [EXAMPLE_URL],
  }),
  events: z.array(z.string()).meta({
    description: `The event types to deliver, one or more of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}.`,
    examples: [['case.closed', 'case.failed']],
  }),
  description: z.string().meta({
    description: 'Your team’s note about the endpoint (at most 500 characters).',
    examples: ['HR system, production'],
  }),
};

const endpointId = z.string().meta({ description: 'The endpoint’s id.', examples: [EXAMPLE_ENDPOINT_ID] });

/** The `{id}` of every endpoint route. */
export const endpointIdInput = z.object({ id: endpointId });

/**
 * `url` and `events` are checked by the domain (they answer INVALID_URL / INVALID_EVENTS, not a
 * generic validation error), so the schema only insists on their JSON types.
 */
export const createEndpointInput = z.strictObject({
  url: endpointFields.url.optional(),
  events: endpointFields.events.optional(),
  description: z
    .string()
    .max(500, { error: 'must be at most 500 characters' })
    .meta(endpointFields.description.meta() ?? {})
    .optional(),
});

const isActive = z.boolean().meta({
  description:
    'Whether deliveries are attempted. `false` holds new deliveries (kept as pending, nothing is lost); `true` resumes them, resets the failure count and clears disabled_at. The service sets it false after 15 deliveries in a row fail for good.',
  examples: [true],
});

export const updateEndpointInput = z.strictObject({
  id: endpointId,
  url: endpointFields.url.optional(),
  events: endpointFields.events.optional(),
  description: z
    .string()
    .max(500, { error: 'must be at most 500 characters' })
    .meta(endpointFields.description.meta() ?? {})
    .optional(),
  is_active: jsonBoolean.optional().meta(isActive.meta() ?? {}),
});

export const endpointOutput = z
  .object({
    id: z.uuid().meta({ description: 'The endpoint’s id.', examples: [EXAMPLE_ENDPOINT_ID] }),
    url: endpointFields.url,
    events: endpointFields.events,
    description: endpointFields.description,
    is_active: isActive,
    disabled_at: z
      .string()
      .nullable()
      .meta({
        description:
          'When the service disabled the endpoint, after 15 deliveries in a row failed for good (the team’s admins got an e-mail); null otherwise.',
        examples: [null],
      }),
    consecutive_failures: z
      .number()
      .int()
      .meta({
        description: 'Deliveries in a row that failed for good (dead-lettered); any success resets it to 0.',
        examples: [0],
      }),
    created_at: z.string().meta({ description: 'When the endpoint was created.', examples: [EXAMPLE_TIME] }),
    updated_at: z.string().meta({ description: 'When the endpoint last changed.', examples: [EXAMPLE_TIME] }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const endpointWithSecretOutput = endpointOutput
  .extend({
    secret: z.string().meta({
      description:
        'The signing secret (`whsec_…`): shown here only (and by rotate-secret). Verify every delivery with it, for instance with the `standardwebhooks` library.',
      examples: ['whsec_f7W20SbYRXgMKbLV8kujbcEOCWdx73RK3bF7db2PKnQ='],
    }),
  })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const endpointListOutput = z
  .object({
    results: z.array(endpointOutput).meta({
      description: 'Every endpoint of this mode (at most 10), oldest first.',
      examples: [
        [
          {
            id: EXAMPLE_ENDPOINT_ID,
            url: EXAMPLE_URL,
            events: ['case.closed', 'case.failed'],
            description: 'HR system, production',
            is_active: true,
            disabled_at: null,
            consecutive_failures: 0,
            created_at: EXAMPLE_TIME,
            updated_at: EXAMPLE_TIME,
          },
        ],
      ],
    }),
  })
  .meta({ id: 'WebhookEndpointList' });

export function toEndpointWire(row: EndpointRow): z.infer<typeof endpointOutput> {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    is_active: row.isActive,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    consecutive_failures: row.consecutiveFailures,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const deliveryId = z.string().meta({
  description: 'The delivery’s id: the `webhook-id` and `X-Service-Delivery` header of each of its attempts.',
  examples: [EXAMPLE_DELIVERY_ID],
});

/** The `{id}` of every delivery route. */
export const deliveryIdInput = z.object({ id: deliveryId });

const DELIVERY_STATUS_DESCRIPTION =
  '`pending`: waiting for its next attempt (or held while its endpoint is disabled); `success`: a 2xx answered; `failed`: an attempt failed and another is scheduled; `dead_letter`: the 8th attempt failed, so nothing more is tried unless you retry or recover it.';

const EXAMPLE_DELIVERY = {
  id: EXAMPLE_DELIVERY_ID,
  endpoint_id: EXAMPLE_ENDPOINT_ID,
  event_id: 'evt_01946b2a-7c3e-7d41-9a2b-3c4d5e6f7a8b',
  event_type: 'case.closed',
  status: 'failed' as const,
  attempt_count: 1,
  next_attempt_at: '2026-01-31T09:00:31.000Z',
  last_attempt_at: '2026-01-31T09:00:01.000Z',
  last_response_status: 503,
  last_error: 'endpoint answered 503',
  created_at: EXAMPLE_TIME,
};

export const deliveryOutput = z
  .object({
    id: z.uuid().meta(deliveryId.meta() ?? {}),
    endpoint_id: z.uuid().meta({ description: 'The endpoint it goes to.', examples: [EXAMPLE_ENDPOINT_ID] }),
    event_id: z
      .string()
      .meta({ description: 'The event it carries (`evt_…`).', examples: [EXAMPLE_DELIVERY.event_id] }),
    event_type: z.string().meta({ description: 'That event’s type.', examples: ['case.closed'] }),
    status: z
      .enum(DELIVERY_STATUSES)
      .meta({ description: DELIVERY_STATUS_DESCRIPTION, examples: ['failed'] }),
    attempt_count: z
      .number()
      .int()
      .meta({ description: 'Attempts made so far.', examples: [1] }),
    next_attempt_at: z
      .string()
      .nullable()
      .meta({
        description:
          'When the next attempt is due (retries come 30 s, 2 min, 15 min, 1 h, 4 h, 12 h and 24 h after a failure); null once it succeeded or is dead-lettered.',
        examples: [EXAMPLE_DELIVERY.next_attempt_at],
      }),
    last_attempt_at: z
      .string()
      .nullable()
      .meta({
        description: 'When the last attempt started; null before the first.',
        examples: [EXAMPLE_DELIVERY.last_attempt_at],
      }),
    last_response_status: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          'The HTTP status your endpoint answered the last attempt with; null when no answer came.',
        examples: [503],
      }),
    last_error: z
      .string()
      .nullable()
      .meta({
        description:
          'Why the last attempt failed (a status, a redirect, a time-out, a connection or TLS error, or a destination refused); null after a success.',
        examples: [EXAMPLE_DELIVERY.last_error],
      }),
    created_at: z
      .string()
      .meta({ description: 'When the event was queued for this endpoint.', examples: [EXAMPLE_TIME] }),
  })
  .meta({ id: 'WebhookDelivery' });

export const attemptOutput = z
  .object({
    attempt_number: z
      .number()
      .int()
      .meta({ description: '1 for the first attempt, and so on.', examples: [1] }),
    started_at: z
      .string()
      .meta({ description: 'When the attempt started.', examples: [EXAMPLE_DELIVERY.last_attempt_at] }),
    duration_ms: z
      .number()
      .int()
      .meta({ description: 'How long it took, in milliseconds.', examples: [212] }),
    response_status: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The HTTP status answered; null when no answer came.', examples: [503] }),
    response_body: z
      .string()
      .nullable()
      .meta({
        description:
          'The first 2 KB of the response body as UTF-8 text, cut between characters; bytes that are not UTF-8, NUL and other control characters (but tab, line feed and carriage return) read U+FFFD.',
        examples: ['Service Unavailable'],
      }),
    error: z
      .string()
      .nullable()
      .meta({
        description: 'Why the attempt failed; null when it succeeded.',
        examples: [EXAMPLE_DELIVERY.last_error],
      }),
  })
  .meta({ id: 'WebhookAttempt' });

export const deliveryDetailOutput = deliveryOutput
  .extend({
    payload: z.string().meta({
      description: 'The exact body every attempt sent and signed: the event’s envelope.',
      examples: [
        `{"id":"${EXAMPLE_DELIVERY.event_id}","type":"case.closed","created_at":"${EXAMPLE_TIME}","livemode":true,"data":{}}`,
      ],
    }),
    attempts: z.array(attemptOutput).meta({
      description: 'Every attempt, oldest first.',
      examples: [
        [
          {
            attempt_number: 1,
            started_at: EXAMPLE_DELIVERY.last_attempt_at,
            duration_ms: 212,
            response_status: 503,
            response_body: 'Service Unavailable',
            error: EXAMPLE_DELIVERY.last_error,
          },
        ],
      ],
    }),
  })
  .meta({ id: 'WebhookDeliveryDetail' });

export const listDeliveriesInput = z.strictObject({
  endpoint_id: z
    .uuid({ error: 'must be a UUID' })
    .meta({ description: 'Only this endpoint’s deliveries.', examples: [EXAMPLE_ENDPOINT_ID] })
    .optional(),
  status: z
    .enum(DELIVERY_STATUSES)
    .meta({
      description: `Only deliveries in this status. ${DELIVERY_STATUS_DESCRIPTION}`,
      examples: ['dead_letter'],
    })
    .optional(),
  event_type: z
    .string()
    .max(100)
    .meta({ description: 'Only deliveries of this event type (or `ping`).', examples: ['case.closed'] })
    .optional(),
  cursor: cursorInput,
});

export type ListDeliveriesInput = z.infer<typeof listDeliveriesInput>;

export const recoverDeliveriesInput = z.strictObject({
  id: endpointId,
  since: z.iso.datetime({ offset: true }).meta({
    description:
      'Send again every failed or dead-lettered delivery of this endpoint created since this instant: ISO 8601 with a time zone, at most 7 days back and not in the future.',
    examples: ['2026-01-30T09:00:00Z'],
  }),
});

export const recoverDeliveriesOutput = z
  .object({
    queued: z
      .number()
      .int()
      .meta({ description: 'How many deliveries were queued for a new attempt.', examples: [3] }),
  })
  .meta({ id: 'RecoveryQueued' });

export const deliveryListOutput = z
  .object({
    ...pageLinks('/v1/webhooks/deliveries/'),
    results: z
      .array(deliveryOutput)
      .meta({ description: 'Up to 50 deliveries, newest first.', examples: [[EXAMPLE_DELIVERY]] }),
  })
  .meta({ id: 'WebhookDeliveryList' });

export function toDeliveryWire(row: DeliveryRow): z.infer<typeof deliveryOutput> {
  return {
    id: row.id,
    endpoint_id: row.endpointId,
    event_id: eventWireId(row.eventId),
    event_type: row.eventType,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at:
      row.status === 'success' || row.status === 'dead_letter'
        ? null
        : (row.nextAttemptAt?.toISOString() ?? null),
    last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    last_response_status: row.lastResponseStatus,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
  };
}

export function toAttemptWire(row: AttemptRow): z.infer<typeof attemptOutput> {
  return {
    attempt_number: row.attemptNumber,
    started_at: row.startedAt.toISOString(),
    duration_ms: row.durationMs,
    response_status: row.responseStatus,
    response_body: row.responseBody,
    error: row.error,
  };
}

/** A delivery with the payload it sends and its attempts, oldest first (the API and the console). */
export function toDeliveryDetailWire(
  delivery: DeliveryRow,
  attempts: AttemptRow[],
): z.infer<typeof deliveryDetailOutput> {
  return { ...toDeliveryWire(delivery), payload: delivery.body, attempts: attempts.map(toAttemptWire) };
}

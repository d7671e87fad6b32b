import { z } from 'zod';
import {
  DELIVERY_STATUSES,
  type webhookAttempts,
  type webhookDeliveries,
  type webhookEndpoints,
} from '@/db/schema';
import { jsonBoolean } from '@/server/cases/wire';
import { eventWireId } from '@/server/platform/ids';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

/** A malformed id names nothing of this team: callers answer 404, as for an unknown id. */
export function isUuid(value: string): boolean {
  return z.uuid().safeParse(value).success;
}

/**
 * `url` and `events` are checked by the domain (they answer INVALID_URL / INVALID_EVENTS, not a
 * generic validation error), so the schema only insists on their JSON types.
 */
export const createEndpointInput = z.strictObject({
  url: z.string().optional(),
  events: z.array(z.string()).optional(),
  description: z.string().max(500, { error: 'must be at most 500 characters' }).optional(),
});

export const updateEndpointInput = z.strictObject({
  id: z.string(),
  url: z.string().optional(),
  events: z.array(z.string()).optional(),
  description: z.string().max(500, { error: 'must be at most 500 characters' }).optional(),
  is_active: jsonBoolean.optional(),
});

export const endpointOutput = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    is_active: z.boolean(),
    disabled_at: z.string().nullable(),
    consecutive_failures: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const endpointWithSecretOutput = endpointOutput
  .extend({ secret: z.string().describe('The signing secret; shown only here.') })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const endpointListOutput = z
  .object({ results: z.array(endpointOutput) })
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

export const deliveryOutput = z
  .object({
    id: z.uuid().describe('Also sent as X-Service-Delivery.'),
    endpoint_id: z.uuid(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

export const attemptOutput = z
  .object({
    attempt_number: z.number().int(),
    started_at: z.string(),
    duration_ms: z.number().int(),
    response_status: z.number().int().nullable(),
    response_body: z
      .string()
      .nullable()
      .describe(
        'The first 2 KB of the response body as UTF-8 text, cut between characters; bytes that are not UTF-8, NUL and other control characters (but tab, line feed and carriage return) read U+FFFD.',
      ),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookAttempt' });

export const deliveryDetailOutput = deliveryOutput
  .extend({
    /** The exact body every attempt sent (and signed). */
    payload: z.string(),
    attempts: z.array(attemptOutput),
  })
  .meta({ id: 'WebhookDeliveryDetail' });

export const listDeliveriesInput = z.strictObject({
  endpoint_id: z.uuid({ error: 'must be a UUID' }).optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  event_type: z.string().max(100).optional(),
  cursor: z.string().max(200).optional(),
});

export type ListDeliveriesInput = z.infer<typeof listDeliveriesInput>;

export const recoverDeliveriesInput = z.strictObject({
  id: z.string(),
  since: z.iso.datetime({ offset: true }),
});

export const recoverDeliveriesOutput = z.object({ queued: z.number().int() }).meta({ id: 'RecoveryQueued' });

export const deliveryListOutput = z
  .object({ next: z.string().nullable(), previous: z.string().nullable(), results: z.array(deliveryOutput) })
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

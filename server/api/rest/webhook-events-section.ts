import { z } from 'zod';
import { EVENT_DATA, EVENT_TYPES, EXAMPLE_EVENT_ID } from '@/server/events/wire';

type Schema = Record<string, unknown>;
type EventType = (typeof EVENT_TYPES)[number];

/** `case.failed` → `CaseFailed`: the stem of the event's schema names. */
function schemaStem(type: EventType): string {
  return type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** The components/schemas entry describing the whole envelope of an event type. */
export function webhookEventSchemaName(type: EventType): string {
  return `${schemaStem(type)}Event`;
}

/** JSON Schema of a zod schema, as OpenAPI 3.1 (JSON Schema 2020-12) embeds it. */
function jsonSchema(schema: z.ZodType): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'output' }) as Schema;
  return rest;
}

/** For each event type, its envelope and its `data`, as named schemas. */
export function webhookEventSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  for (const type of EVENT_TYPES) {
    const stem = schemaStem(type);
    schemas[`${stem}Data`] = jsonSchema(EVENT_DATA[type]);
    schemas[webhookEventSchemaName(type)] = {
      type: 'object',
      description: `The envelope of a \`${type}\` event: in the body of its deliveries and from the events API, byte for byte.`,
      required: ['id', 'type', 'created_at', 'livemode', 'data'],
      additionalProperties: false,
      properties: {
        id: {
          type: 'string',
          pattern: '^evt_',
          description: 'The event’s id (`evt_…`): the same in every delivery of it and in the events API.',
          examples: [EXAMPLE_EVENT_ID],
        },
        type: { type: 'string', const: type, description: 'The event type.', examples: [type] },
        created_at: {
          type: 'string',
          format: 'date-time',
          description: 'When it happened (ISO 8601, UTC).',
          examples: ['2026-01-31T09:00:00.000Z'],
        },
        livemode: { type: 'boolean', description: '`false` for a test-mode event.', examples: [true] },
        data: {
          $ref: `#/components/schemas/${stem}Data`,
          description: EVENT_DATA[type].meta()?.description,
          examples: [exampleData(EVENT_DATA[type])],
        },
      },
    };
  }
  return schemas;
}

/**
 * An example of a `data` object: each field's first example, as the schemas below describe it
 * (so the example and the schema cannot disagree).
 */
function exampleData(schema: z.ZodObject): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => [
      name,
      (field.meta()?.examples as unknown[] | undefined)?.[0],
    ]),
  );
}

const EXAMPLE_DELIVERY_ID = '01946b2a-7c3f-7a10-8b2c-4d5e6f7a8b9c';

/** The headers every delivery carries (server/webhooks/signature.ts signs them). */
const DELIVERY_HEADERS: Schema[] = [
  {
    name: 'webhook-id',
    description: 'The delivery’s id; the same on every attempt of one delivery (use it to drop repeats).',
    example: EXAMPLE_DELIVERY_ID,
  },
  {
    name: 'webhook-timestamp',
    description: 'When this attempt was signed (Unix time, seconds). Refuse attempts far from your clock.',
    example: '1769850000',
  },
  {
    name: 'webhook-signature',
    description:
      '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_` (Standard Webhooks: `standardwebhooks` verifies it).',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
  {
    name: 'X-Service-Signature',
    description: '`sha256=` and the hex HMAC-SHA256 of the exact body, keyed with the whole secret string.',
    example: 'sha256=6f1ed002ab5595859014ebf0951522d9f8d6b9a5c1e5e8c7a3bd0d3f5a3b4c21',
  },
  { name: 'X-Service-Event', description: 'The event type.', example: 'case.closed' },
  {
    name: 'X-Service-Delivery',
    description: 'The delivery’s id (equal to `webhook-id`).',
    example: EXAMPLE_DELIVERY_ID,
  },
].map((header) => ({ in: 'header', required: true, schema: { type: 'string' }, ...header }));

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, the POST a subscribed endpoint
 * receives. Any 2xx acknowledges; anything else, a redirect or a time-out fails the attempt, which
 * is retried on the documented schedule.
 */
export const WEBHOOK_EVENTS_SECTION: Record<string, Schema> = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        operationId: `webhook-${type.replace(/[._]/g, '-')}`,
        summary: `${type} event`,
        description: EVENT_DATA[type].meta()?.description,
        tags: ['Webhook events'],
        // Vouch calls the receiver; the receiver checks the signature headers, not a key.
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { $ref: `#/components/schemas/${webhookEventSchemaName(type)}` } },
          },
        },
        responses: {
          '2XX': { description: 'Acknowledged: the delivery is done.' },
          default: { description: 'The attempt failed; it is retried on the schedule.' },
        },
      },
    },
  ]),
);

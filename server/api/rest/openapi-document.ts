import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { ERROR_TABLE } from '@/server/api/error-table';
import { appRouter } from '@/server/api/trpc/root';
import { EVENT_TYPES } from '@/server/events/wire';
import { APP_ERRORS, type AppErrorCode } from '@/server/platform/errors';
import { apiGuides } from './api-guides';
import { codesByStatus, operationErrorCodes } from './operation-errors';
import { REST_ROUTES } from './routes';
import {
  WEBHOOK_EVENTS_SECTION,
  webhookEventSchemaName,
  webhookEventSchemas,
} from './webhook-events-section';

type Schema = Record<string, unknown>;
type Operation = {
  parameters?: Schema[];
  responses?: Record<string, Schema>;
  security?: unknown;
  [key: string]: unknown;
};

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'detail', 'code'],
  properties: {
    error: { type: 'string', description: 'The code in lower case.', examples: ['validation_error'] },
    detail: {
      type: 'string',
      description:
        'What went wrong, in words a person can act on: show it to one, and quote the Request-Id to support.',
      examples: ['subject_email: required'],
    },
    code: {
      type: 'string',
      enum: Object.keys(ERROR_TABLE),
      description: 'What went wrong, for your code to act on: each operation lists the codes it can answer.',
      examples: ['VALIDATION_ERROR'],
    },
  },
  additionalProperties: false,
};

/** The response headers, defined once and referenced by every response that carries them. */
const HEADERS = {
  'Request-Id': {
    description: 'This request’s id (`req_…`). Quote it to support; every log line about it carries it.',
    schema: { type: 'string', pattern: '^req_[A-Za-z0-9_-]+$' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests the budget this request drew on allows per window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'When the window ends and the budget is full again (Unix time, seconds).',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  'WWW-Authenticate': {
    description: 'The scheme to authenticate with: `Bearer realm="vouch"`.',
    schema: { type: 'string' },
  },
  Location: {
    description: 'The URL of the created resource.',
    schema: { type: 'string', format: 'uri' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
} as const;

type HeaderName = keyof typeof HEADERS;

/** The header components referenced so far: only these are published. */
const referencedHeaders = new Set<string>();

/** References to the named headers; Request-Id and those in `required` must be present. */
function headerRefs(names: HeaderName[], required: HeaderName[] = []): Record<string, Schema> {
  return Object.fromEntries(
    names.map((name) => {
      const component = required.includes(name) || name === 'Request-Id' ? `${name}Required` : name;
      referencedHeaders.add(component);
      return [name, { $ref: `#/components/headers/${component}` }];
    }),
  );
}

function headerComponents(): Record<string, Schema> {
  const components: Record<string, Schema> = {};
  for (const [name, header] of Object.entries(HEADERS)) {
    const { required: _required, ...definition } = header as Schema & { required?: boolean };
    components[name] = { ...definition, required: false };
    components[`${name}Required`] = { ...definition, required: true };
  }
  return Object.fromEntries(Object.entries(components).filter(([name]) => referencedHeaders.has(name)));
}

const RATE_LIMIT: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** Which headers an error of `status` carries: Retry-After on 429 and 503 always, on 409 when busy. */
function errorHeaders(status: number): Record<string, Schema> {
  if (status === 401)
    return headerRefs(['Request-Id', 'WWW-Authenticate', ...RATE_LIMIT], ['WWW-Authenticate']);
  if (status === 429)
    return headerRefs(['Request-Id', 'Retry-After', ...RATE_LIMIT], ['Retry-After', ...RATE_LIMIT]);
  if (status === 503) return headerRefs(['Request-Id', 'Retry-After', ...RATE_LIMIT], ['Retry-After']);
  if (status === 409) return headerRefs(['Request-Id', 'Retry-After', ...RATE_LIMIT]);
  return headerRefs(['Request-Id', ...RATE_LIMIT]);
}

function errorResponse(status: number, codes: AppErrorCode[]): Schema {
  return {
    description: codes.map((code) => `\`${code}\`: ${APP_ERRORS[code]}`).join('\n\n'),
    headers: errorHeaders(status),
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Error' },
            {
              type: 'object',
              properties: {
                code: {
                  enum: codes,
                  description: `The codes this status carries here: ${codes.join(', ')}.`,
                  examples: [codes[0]],
                },
              },
            },
          ],
        },
        examples: Object.fromEntries(
          codes.map((code) => [
            code,
            { value: { error: code.toLowerCase(), detail: APP_ERRORS[code], code } },
          ]),
        ),
      },
    },
  };
}

/** What the events API answers: any one of the envelopes the `webhooks` section describes. */
const ANY_EVENT = {
  oneOf: EVENT_TYPES.map((type) => ({ $ref: `#/components/schemas/${webhookEventSchemaName(type)}` })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(
      EVENT_TYPES.map((type) => [type, `#/components/schemas/${webhookEventSchemaName(type)}`]),
    ),
  },
};

const IDEMPOTENCY_KEY_PARAMETER = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes retries safe: a repeat within 24 hours gets the first answer again (with `Idempotent-Replayed: true`) instead of a second case. 1 to 64 printable characters; scoped to the team and mode.',
  schema: { type: 'string', minLength: 1, maxLength: 64, examples: ['onboarding-42'] },
};

const DESCRIPTION = `Workforce identity verification.

Authenticate every request except \`GET /v1/ping\` with \`Authorization: Bearer <key>\`: a \`vouch_live_…\` key for real cases, a \`vouch_test_…\` key for test mode (nothing charged, nothing sent, cases closed with \`POST /v1/cases/{id}/simulate/\`). Bodies are JSON; paths end with a slash (except \`/v1/ping\`).

Every error is \`{"error", "detail", "code"}\` with the HTTP status and code listed under each operation (an id of your team's other mode answers 404 with a detail saying so and which key finds it); a method a path does not have answers 405 \`METHOD_NOT_ALLOWED\` with an \`Allow\` header. Reads are limited to 120 and writes to 30 per minute per team and mode (\`X-RateLimit-*\` on every answer); every answer carries a \`Request-Id\`.`;

/**
 * A parameter with its schema's description on the parameter itself, where renderers look: the
 * generator unwraps an optional query field, so what the zod schema says reaches only `schema`.
 */
function describedParameter(parameter: Schema): Schema {
  const schema = parameter.schema as Schema | undefined;
  if (parameter.description || typeof schema?.description !== 'string') return parameter;
  const { description, ...rest } = schema;
  return { ...parameter, description, schema: rest };
}

/**
 * The document clients download from /v1/openapi.json and /docs renders: trpc-to-openapi's paths,
 * parameters and schemas, with what the generator cannot know laid on top. Paths keep their
 * trailing slash; each operation lists exactly the statuses it can answer (its success status,
 * and per error status the codes it can carry, from operation-errors.ts), with the headers each
 * answer carries; `webhooks` describes every event delivered to endpoints.
 */
export function buildOpenApiDocument(baseUrl: string): OpenAPIObject {
  let document = documents.get(baseUrl);
  if (!document) {
    document = generateDocument(baseUrl);
    documents.set(baseUrl, document);
  }
  return document;
}

/** The generator's success content (always under application/json) under the type the route answers with. */
function withMediaType(content: Schema | undefined, mediaType: string): Schema | undefined {
  const json = content?.['application/json'];
  return json === undefined || mediaType === 'application/json' ? content : { [mediaType]: json };
}

/** The public signing keys, at the service's origin. */
function jwksUri(baseUrl: string): string {
  return `${new URL(baseUrl).origin}/.well-known/jwks.json`;
}

/** Built once per base URL: the procedures cannot change while the process runs. */
const documents = new Map<string, OpenAPIObject>();

function generateDocument(baseUrl: string): OpenAPIObject {
  const generated = generateOpenApiDocument(appRouter, {
    title: 'Vouch API',
    version: '1.0.0',
    description: `${DESCRIPTION}\n\n${apiGuides(baseUrl)}`,
    baseUrl,
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key: `vouch_live_…` (live mode) or `vouch_test_…` (test mode).',
      },
    },
  });

  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of REST_ROUTES) {
    const generatedPath = route.path.replace(/\/$/, '');
    const method = route.method.toLowerCase();
    const operation = (generated.paths?.[generatedPath] as Record<string, Operation> | undefined)?.[method];
    if (!operation) throw new Error(`the generator did not publish ${route.method} ${route.path}`);

    const success = route.successStatus ?? 200;
    const generatedSuccess = operation.responses?.['200'] as Schema | undefined;
    const successHeaders: HeaderName[] = ['Request-Id', ...RATE_LIMIT];
    if (success === 201) successHeaders.push('Location');
    if (route.idempotent) successHeaders.push('Idempotent-Replayed');
    const responses: Record<string, Schema> = {
      [success]:
        success === 204
          ? { description: 'Done; no content.', headers: headerRefs(successHeaders, RATE_LIMIT) }
          : {
              ...generatedSuccess,
              content: withMediaType(generatedSuccess?.content as Schema | undefined, route.responseType),
              headers: headerRefs(successHeaders, success === 201 ? [...RATE_LIMIT, 'Location'] : RATE_LIMIT),
            },
    };
    for (const [status, codes] of codesByStatus(operationErrorCodes(route))) {
      responses[status] = errorResponse(status, codes);
    }

    const { security: _security, ...rest } = operation;
    const item = paths[`/v1${route.path}`] ?? {};
    paths[`/v1${route.path}`] = item;
    item[method] = {
      ...rest,
      parameters: [
        ...(operation.parameters ?? []).map(describedParameter),
        ...(route.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : []),
      ],
      ...(route.authenticated ? { security: [{ bearerAuth: [] }] } : { security: [] }),
      responses,
    };
  }

  // The generator's own error schemas (`error.BAD_REQUEST`…) describe its error body, which the
  // API never sends.
  const schemas = Object.fromEntries(
    Object.entries(generated.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.')),
  );
  return {
    ...generated,
    info: {
      ...generated.info,
      description: `${generated.info.description}\n\nThe service's public signing keys (JWKS), to verify what it signs: ${jwksUri(baseUrl)}`,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Where a verifier finds the keys, for tools that read the document (as OpenID discovery names it).
    'x-jwks-uri': jwksUri(baseUrl),
    paths,
    webhooks: WEBHOOK_EVENTS_SECTION,
    components: {
      ...generated.components,
      schemas: { ...schemas, ...webhookEventSchemas(), Event: ANY_EVENT, Error: ERROR_SCHEMA },
      headers: headerComponents(),
    },
  } as OpenAPIObject;
}

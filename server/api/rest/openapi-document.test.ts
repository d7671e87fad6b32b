import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema/values';
import { EVENT_TYPES } from '@/server/events/wire';
import { buildOpenApiDocument } from './openapi-document';

const document = buildOpenApiDocument('https://vouch.acme-corp.com');

describe('the OpenAPI document', () => {
  it('lints clean with Redocly’s recommended rules, errors and warnings alike (the spec’s trailing slashes allowed)', async () => {
    const config = await createConfig({
      extends: ['recommended'],
      rules: { 'no-path-trailing-slash': 'off' },
    });
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: 'openapi.json',
      config,
    });
    expect(
      problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    ).toEqual([]);
  });

  type Response = { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> };
  type Operation = {
    security?: unknown[];
    responses: Record<string, Response>;
    parameters?: { name: string }[];
  };
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, op]) => ({
      key: `${method} ${path}`,
      op,
    })),
  );
  const codesOf = (op: Operation, status: string) =>
    (
      op.responses[status]?.content?.['application/json']?.schema as
        | { allOf: [unknown, { properties: { code: { enum: string[] } } }] }
        | undefined
    )?.allOf[1].properties.code.enum;

  it('needs no key for /v1/ping and a key for everything else', () => {
    for (const { key, op } of operations) {
      expect(op.security, key).toEqual(key === 'get /v1/ping' ? [] : [{ bearerAuth: [] }]);
      expect(Object.keys(op.responses).includes('401'), key).toBe(key !== 'get /v1/ping');
    }
  });

  it('gives every answer of every operation its Request-Id, and every success its rate-limit headers', () => {
    for (const { key, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.headers, `${key} ${status}`).toHaveProperty('Request-Id');
        if (Number(status) < 300) {
          expect(Object.keys(response.headers ?? {}), `${key} ${status}`).toEqual(
            expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
          );
        }
      }
      expect(op.responses['429']?.headers, key).toHaveProperty('Retry-After');
      expect(op.responses['503']?.headers, key).toHaveProperty('Retry-After');
    }
  });

  it('lists each operation’s own codes under their statuses', () => {
    const create = operations.find(({ key }) => key === 'post /v1/cases/')?.op;
    expect(create?.parameters?.map((p) => p.name)).toContain('Idempotency-Key');
    expect(create?.responses['201']?.headers).toHaveProperty('Idempotent-Replayed');
    expect(create?.responses['201']?.headers).toHaveProperty('Location');
    expect(codesOf(create as Operation, '409')).toEqual([
      'IDEMPOTENCY_KEY_EXPIRED',
      'IDEMPOTENCY_KEY_IN_USE',
    ]);
    expect(codesOf(create as Operation, '422')).toEqual([
      'VALIDATION_ERROR',
      'IDEMPOTENCY_KEY_REUSED',
      'TRIAL_EXPIRED',
      'INSUFFICIENT_ALLOWANCE',
      'PASSKEY_NOT_ENROLLED',
    ]);
    expect(create?.responses).not.toHaveProperty('404');
    const simulate = operations.find(({ key }) => key === 'post /v1/cases/{id}/simulate/')?.op as Operation;
    expect(codesOf(simulate, '409')).toEqual(['CASE_NOT_OPEN', 'STEP_NOT_PENDING']);
    expect(codesOf(simulate, '422')).toEqual(['VALIDATION_ERROR', 'TEST_MODE_ONLY']);
    const deleteEndpoint = operations.find(({ key }) => key === 'delete /v1/webhooks/endpoints/{id}/')?.op;
    expect(deleteEndpoint?.responses['204']?.content).toBeUndefined();
    expect(deleteEndpoint?.responses).not.toHaveProperty('413');
  });

  it('describes every event type in the webhooks section, and the events API answers any of them', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    const event = document.components?.schemas?.Event as { oneOf: { $ref: string }[] };
    expect(event.oneOf).toHaveLength(EVENT_TYPES.length);
  });

  /**
   * Every property of every request and response schema (the events and webhooks included), and
   * every parameter, wherever it sits in the document: its path and what it lacks.
   */
  function undocumented(): string[] {
    const missing: string[] = [];
    const hasExample = (node: Record<string, unknown>) =>
      node.example !== undefined || (Array.isArray(node.examples) && node.examples.length > 0);
    const visit = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) visit(item, `${where}/${i}`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const object = node as Record<string, unknown>;
      if (typeof object.in === 'string' && typeof object.name === 'string') {
        const schema = (object.schema ?? {}) as Record<string, unknown>;
        const lacks = [
          ...(object.description ? [] : ['description']),
          ...(hasExample(object) || hasExample(schema) ? [] : ['example']),
        ];
        if (lacks.length > 0)
          missing.push(`${where} (${object.in} ${object.name}): no ${lacks.join(', no ')}`);
      }
      if (typeof object.properties === 'object' && object.properties !== null) {
        for (const [name, property] of Object.entries(
          object.properties as Record<string, Record<string, unknown>>,
        )) {
          const lacks = [
            ...(property.description ? [] : ['description']),
            ...(hasExample(property) ? [] : ['example']),
          ];
          if (lacks.length > 0) missing.push(`${where}/properties/${name}: no ${lacks.join(', no ')}`);
        }
      }
      for (const [key, value] of Object.entries(object)) {
        // Error examples are whole answers, not schemas; response headers are documented apart.
        if (key === 'examples' && !Array.isArray(value)) continue;
        visit(value, `${where}/${key}`);
      }
    };
    visit(document.paths, '#/paths');
    visit(document.webhooks, '#/webhooks');
    visit(document.components?.schemas, '#/components/schemas');
    return missing;
  }

  it("describes every method a case's or a template's body can request", () => {
    const requestable = (path: string) => {
      const body = (document.paths?.[path] as { post?: { requestBody?: unknown } } | undefined)?.post
        ?.requestBody as
        | { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } }
        | undefined;
      const methods = body?.content['application/json'].schema.properties.verification_methods as {
        description?: string;
        propertyNames?: { enum?: string[] };
      };
      return methods?.description ?? '';
    };
    for (const path of ['/v1/cases/', '/v1/templates/']) {
      const description = requestable(path);
      for (const method of VERIFICATION_METHODS) expect(description, path).toContain(`\`${method}\`: `);
    }
  });

  it('describes every request and response property and every parameter, each with an example', () => {
    expect(undocumented()).toEqual([]);
  });

  it('gives examples that their own schemas accept', async () => {
    const { default: Ajv2020 } = await import('ajv/dist/2020');
    const { default: addFormats } = await import('ajv-formats');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    const wrong: string[] = [];
    const visit = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const object = node as Record<string, unknown>;
      if (
        Array.isArray(object.examples) &&
        (object.type !== undefined || object.anyOf || object.enum || object.$ref)
      ) {
        const schema = JSON.parse(JSON.stringify(object).replaceAll('"#/components/', '"doc#/components/'));
        delete schema.examples;
        const validate = ajv.compile(schema);
        for (const example of object.examples) {
          if (!validate(example))
            wrong.push(`${where}: ${JSON.stringify(example)} ${ajv.errorsText(validate.errors)}`);
        }
      }
      for (const [key, value] of Object.entries(object)) visit(value, `${where}/${key}`);
    };
    visit(document.paths, '#/paths');
    visit(document.webhooks, '#/webhooks');
    visit(document.components?.schemas, '#/components/schemas');
    expect(wrong).toEqual([]);
  });
});

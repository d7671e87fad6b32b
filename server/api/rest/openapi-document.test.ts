import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
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
});

/**
 * POST /v1/cases/batch/ across the wire (decisions: "Batch creation and imports"): 200 with one
 * result per item in order, each item's error as a single create answers it, the write budget
 * counted once for the request, 1 to 100 items, the whole batch replayed under its
 * Idempotency-Key, and the operation in the OpenAPI document. The contract check
 * (test/setup/openapi-conformance.ts) holds every answer here to the document. The rules behind it
 * (charges, events, mails, savepoints, redaction) are tested in-process: test/domain/case-batch.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  // The contract's budget of 30 writes a minute: a batch of 100 must fit in one of them.
  app = await startApp({ databaseUrl: database.url });
  const { key } = await createTeam(
    database.db,
    { name: 'Hiring Wave', adminEmail: 'admin@wave.test', planCode: 'enterprise' },
    systemClock,
  );
  api = apiClient(app.baseUrl, key.token);
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

interface BatchAnswer {
  results: Array<
    | { case: { id: string; subject_email: string; status: string; verification_url: string } }
    | { error: { error: string; detail: string; code: string }; status: number }
  >;
}

const hire = (n: number) => ({
  subject_email: `hire-${n}@wave.test`,
  subject_name: `Hire ${n}`,
  verification_methods: { email: true },
});

describe('POST /v1/cases/batch/', () => {
  it('answers 200 with each item’s case or error in order, counting once against the write budget', async () => {
    const before = await api.post('/v1/cases/', hire(0));
    expect(before.status, before.text).toBe(201);
    const remaining = Number(before.headers.get('x-ratelimit-remaining'));

    const cases = Array.from({ length: 100 }, (_, n) => hire(n + 1));
    cases[41] = { subject_email: 'hire-42', verification_methods: { email: true } } as never;
    const res = await api.post<BatchAnswer>('/v1/cases/batch/', { cases });
    expect(res.status, res.text).toBe(200);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    expect(res.body.results).toHaveLength(100);
    res.body.results.forEach((item, index) => {
      if (index === 41) {
        expect(item).toEqual({
          status: 422,
          error: expect.objectContaining({ code: 'VALIDATION_ERROR', error: 'validation_error' }),
        });
      } else {
        expect('case' in item && item.case.subject_email).toBe(`hire-${index + 1}@wave.test`);
      }
    });
    // The item's error reads as the single create's for the same body.
    const single = await api.post('/v1/cases/', cases[41]);
    expectError(single, 422, 'VALIDATION_ERROR');
    const item = res.body.results[41];
    expect(item && 'error' in item && item.error).toEqual(single.body);

    // Each case is a case like any other.
    const created = res.body.results[0];
    if (!created || !('case' in created)) throw new Error('the first item was not created');
    const read = await api.get<{ id: string; status: string }>(`/v1/cases/${created.case.id}/`);
    expect(read.body).toMatchObject({ id: created.case.id, status: 'open' });
  });

  it('refuses no items and more than 100 with 422 VALIDATION_ERROR, creating nothing', async () => {
    expectError(await api.post('/v1/cases/batch/', { cases: [] }), 422, 'VALIDATION_ERROR');
    const tooMany = await api.post('/v1/cases/batch/', {
      cases: Array.from({ length: 101 }, (_, n) => hire(1000 + n)),
    });
    expectError(tooMany, 422, 'VALIDATION_ERROR');
    expect((tooMany.body as { detail: string }).detail).toContain('100');
    expectError(await api.post('/v1/cases/batch/', [hire(1)]), 422, 'VALIDATION_ERROR');
    const [row] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from cases where subject_email like 'hire-1___@wave.test'`;
    expect(row?.n).toBe(0);
  });

  it('replays the whole batch under its Idempotency-Key, byte for byte', async () => {
    const body = { cases: [hire(500), hire(501)] };
    const first = await api.post<BatchAnswer>('/v1/cases/batch/', body, { 'Idempotency-Key': 'wave-a' });
    expect(first.status, first.text).toBe(200);
    const again = await api.post<BatchAnswer>('/v1/cases/batch/', body, { 'Idempotency-Key': 'wave-a' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    const other = await api.post('/v1/cases/batch/', { cases: [hire(502)] }, { 'Idempotency-Key': 'wave-a' });
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
    const [row] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from cases where subject_email in ('hire-500@wave.test', 'hire-502@wave.test')`;
    expect(row?.n).toBe(1);
  });

  it('carries each item’s offer_passkey, with an Idempotency-Key and without', async () => {
    const offers = [true, false, undefined];
    for (const [first, key] of [
      [600, null],
      [700, 'wave-offers'],
    ] as const) {
      const cases = offers.map((offer, n) => ({ ...hire(first + n), offer_passkey: offer }));
      const res = await api.post<{ results: Array<{ case?: { id: string; offer_passkey: boolean } }> }>(
        '/v1/cases/batch/',
        { cases },
        key ? { 'Idempotency-Key': key } : {},
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.results.map((item) => item.case?.offer_passkey)).toEqual([true, false, false]);
      // As stored, and so as the closed page reads it.
      const rows = await database.sql<{ subject_email: string; offer_passkey: boolean }[]>`
        select subject_email, offer_passkey from cases
        where id in ${database.sql(res.body.results.map((item) => item.case?.id ?? ''))}
        order by subject_email`;
      expect(rows).toEqual(
        offers.map((offer, n) => ({
          subject_email: `hire-${first + n}@wave.test`,
          offer_passkey: offer === true,
        })),
      );
    }
  });

  it('is in the OpenAPI document: each item is the single create’s body, each result a case or an error', async () => {
    interface Operation {
      operationId: string;
      responses: Record<string, unknown>;
      parameters: Array<{ name: string }>;
      requestBody: {
        content: Record<
          string,
          {
            schema: {
              properties: {
                cases: {
                  minItems: number;
                  maxItems: number;
                  items: { required: string[]; properties: Record<string, unknown> };
                };
              };
            };
          }
        >;
      };
    }
    const document = (await api.get<{ paths: Record<string, { post: Operation }> }>('/v1/openapi.json')).body;
    const operation = document.paths['/v1/cases/batch/']?.post;
    if (!operation) throw new Error('POST /v1/cases/batch/ is not in the document');
    expect(operation.operationId).toBeTruthy();
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '409', '422', '429']));
    const items = operation.requestBody.content['application/json']?.schema.properties.cases;
    expect(items?.maxItems).toBe(100);
    expect(items?.minItems).toBe(1);
    expect(items?.items.required).toEqual(['subject_email']);
    // Methods, or a template naming them: the create body says which it takes.
    expect(Object.keys(items?.items.properties ?? {})).toEqual(
      expect.arrayContaining(['verification_methods', 'template']),
    );
    expect(operation.parameters.map((p) => p.name)).toContain('Idempotency-Key');
  });
});

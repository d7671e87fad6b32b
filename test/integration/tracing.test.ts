/**
 * Traces as an OpenTelemetry collector receives them (OTLP/HTTP, the JSON protocol so the test can
 * read them): for a `POST /v1/cases/`, the request's SERVER span with its route's template, the
 * procedure's span under it, the database statements under that, and, in the worker process, the
 * case's webhook delivery as a job span in the same trace with its attempt under it. No attribute
 * anywhere holds the subject's e-mail, name or answer; log lines carry the trace's ids; the
 * default protocol is protobuf; and without a collector named, nothing is exported, even to
 * OTLP's default address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, type RunningWorker, startApp, startWorkerProcess } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@/test/support/otlp-receiver';

const SERVER = 2;
const CLIENT = 3;
const SUBJECT = { email: 'ada.tracing@example.test', name: 'Ada Tracewell', answer: 'Blue-Sparrow-42' };

let database: TestDatabase;
let certificate: Certificate;
let webhooks: Receiver;
let otlp: OtlpReceiver;
let app: RunningApp;
let worker: RunningWorker;
let apiKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  webhooks = await startReceiver(certificate);
  otlp = await startOtlpReceiver();
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Batches leave every 100 ms rather than every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  };
  // The web process queues the delivery; a worker process of its own attempts it.
  app = await startApp({
    databaseUrl: database.url,
    env: { ...env, RUN_WORKERS: 'false', LOG_LEVEL: 'debug' },
  });
  worker = await startWorkerProcess({ databaseUrl: database.url, env });
  const created = await createTeam(database.db, { name: 'Traced', adminEmail: 'a@traced.test' }, systemClock);
  apiKey = created.key.token;
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.stop();
  await webhooks?.close();
  await otlp?.close();
  await database?.close();
});

/** `span`'s ancestors in its trace, nearest first. */
function ancestors(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  let parent = spans.find((s) => s.traceId === span.traceId && s.spanId === span.parentSpanId);
  while (parent) {
    chain.push(parent);
    const above = parent;
    parent = spans.find((s) => s.traceId === above.traceId && s.spanId === above.parentSpanId);
  }
  return chain;
}

describe('traces', () => {
  it('follow a creation from its request through its procedure and statements to its delivery in the worker', async () => {
    const api = apiClient(app.baseUrl, apiKey);
    const endpoint = await api.post('/v1/webhooks/endpoints/', {
      url: webhooks.url('/traced'),
      events: ['case.created'],
    });
    expect(endpoint.status).toBe(201);
    const created = await api.post<{ id: string }>('/v1/cases/', {
      subject_email: SUBJECT.email,
      subject_name: SUBJECT.name,
      verification_methods: { email: true, custom_question: true },
      custom_question_text: 'Your team’s code word?',
      custom_question_answer: SUBJECT.answer,
    });
    expect(created.status, created.text).toBe(201);
    await webhooks.waitFor('/traced', 1);

    const server = await eventually(async () =>
      otlp.spans.find(
        (span) =>
          span.kind === SERVER &&
          span.attributes['http.route'] === '/v1/cases/' &&
          span.attributes['http.request.method'] === 'POST',
      ),
    );
    expect(server.service).toBe('vouch-web');
    expect(server.name).toBe('POST /v1/cases/');
    expect(server.attributes['http.response.status_code']).toBe(201);

    const procedure = await eventually(async () =>
      otlp.spans.find((span) => span.parentSpanId === server.spanId && span.name === 'trpc cases.create'),
    );
    expect(procedure.attributes['rpc.method']).toBe('cases.create');

    // The statements, under the procedure (directly or through a span of its own).
    const statements = otlp.spans.filter(
      (span) =>
        span.traceId === server.traceId &&
        span.attributes['db.system.name'] === 'postgresql' &&
        ancestors(span, otlp.spans).some((above) => above.spanId === procedure.spanId),
    );
    expect(statements.length).toBeGreaterThan(2);
    for (const statement of statements) {
      expect(statement.kind).toBe(CLIENT);
      expect(statement.attributes['db.query.text']).toEqual(expect.any(String));
    }
    // The creation's writes are one statement, named by its summary of every table it writes.
    const writes = statements.find((span) => /(^| )INSERT cases( |$)/.test(span.name));
    expect(writes?.attributes['db.query.summary']).toBe(writes?.name);
    expect(writes?.name).toContain('INSERT events');

    // The delivery, in the worker: its job's span continues the request's trace (or links to it),
    // and the attempt is under it.
    const job = await eventually(async () =>
      otlp.spans.find(
        (span) =>
          span.service === 'vouch-worker' &&
          span.name === 'process webhook-deliver' &&
          (span.traceId === server.traceId || span.links.some((link) => link.traceId === server.traceId)),
      ),
    );
    const attempt = await eventually(async () =>
      otlp.spans.find(
        (span) => span.parentSpanId === job.spanId && span.name === 'webhook attempt case.created',
      ),
    );
    expect(attempt.kind).toBe(CLIENT);
    expect(attempt.attributes['http.response.status_code']).toBe(200);
    expect(attempt.attributes['server.address']).toBe('localhost');

    // Nothing personal anywhere: every attribute of every span and resource, both processes.
    const everything = JSON.stringify(otlp.spans.map((span) => [span.name, span.attributes, span.resource]));
    for (const secret of [SUBJECT.email, SUBJECT.name, SUBJECT.answer, apiKey, 'ada.tracing']) {
      expect(everything).not.toContain(secret);
    }
    expect(everything.toLowerCase()).not.toContain(SUBJECT.answer.toLowerCase());

    // The request's log line carries its trace.
    const requestLine = app
      .logs()
      .split('\n')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      })
      .find((line) => line.message === 'request' && line.trace_id === server.traceId);
    expect(requestLine).toMatchObject({ span_id: server.spanId, method: 'POST', status: 201 });
  }, 60_000);

  it('continues a caller’s trace it is sent (W3C traceparent)', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await fetch(`${app.baseUrl}/v1/cases/`, {
      headers: {
        Authorization: `Bearer ${apiKey}`,
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
    });
    expect(res.status).toBe(200);
    const server = await eventually(async () =>
      otlp.spans.find((span) => span.kind === SERVER && span.traceId === traceId),
    );
    expect(server.parentSpanId).toBe('00f067aa0ba902b7');
    expect(server.attributes['http.route']).toBe('/v1/cases/');
  });
});

describe('tracing configured', () => {
  it('exports OTLP/HTTP protobuf by default', async () => {
    const collector = await startOtlpReceiver();
    const protobuf = await startWorkerProcess({
      databaseUrl: database.url,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      // The worker's periodic jobs make spans within a second or two.
      const exported = await eventually(
        async () => collector.exports.find((e) => e.path === '/v1/traces'),
        20_000,
      );
      expect(exported.contentType).toBe('application/x-protobuf');
      expect(exported.bytes).toBeGreaterThan(0);
    } finally {
      await protobuf.stop();
      await collector.close();
    }
  }, 60_000);

  it('off (no collector named), sends nothing, not even to OTLP’s default address', async () => {
    // Where an SDK started without an endpoint would send: localhost:4318.
    const fallback = await startOtlpReceiver({ port: 4318, host: '::' });
    // Everything else of OpenTelemetry's configuration set: only the collector is missing.
    const quiet = await startWorkerProcess({
      databaseUrl: database.url,
      env: { OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'quiet', OTEL_TRACES_SAMPLER: 'always_on' },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(fallback.exports).toEqual([]);
      expect(quiet.logs()).not.toMatch(/trace_id/);
    } finally {
      await quiet.stop();
      await fallback.close();
    }
  }, 60_000);
});

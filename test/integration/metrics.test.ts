/**
 * `/metrics` as Prometheus reads it: scraped and parsed with a Prometheus text-format parser, each
 * series the service promises moves by exactly what a known workload does to it, the process's own
 * (CPU, memory, event loop, GC, database connections) are there, no label holds an e-mail, an id or
 * a raw path, and the public port never serves it. Under the launcher every process serves its own
 * on the next free port from METRICS_PORT, listed at start.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { freePort, type RunningApp, startApp, startWorkerProcess } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The types a scrape declares (`# TYPE name type`). */
let declaredTypes = new Map<string, string>();

/**
 * Every sample of a scrape, with its labels, as the text format's parser reads it. Histograms are
 * read sample by sample (`_bucket`, `_sum`, `_count`): the parser merges every labelled histogram's
 * series into one (it groups buckets by `le` alone), so their TYPE lines are kept out of its way
 * and checked apart.
 */
async function scrape(port: number): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  declaredTypes = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
  const families = parsePrometheusTextFormat(text.replace(/^# TYPE \S+ (histogram|summary)\n/gm, ''));
  return families.flatMap((family) =>
    family.metrics.map((metric) => ({
      name: family.name,
      labels: metric.labels ?? {},
      value: Number(metric.value),
    })),
  );
}

/** The sum of a series' samples whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

let database: TestDatabase;
let certificate: Certificate;
let receiver: Receiver;
let app: RunningApp;
let metricsPort: number;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  metricsPort = await freePort();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      METRICS_PORT: String(metricsPort),
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // A failed attempt is retried an hour later: after it, nothing is ready in the queue.
      WEBHOOK_RETRY_SCHEDULE: '3600',
      JOB_TICK_SECONDS: '1',
      RATE_LIMIT_READ_PER_MINUTE: '3',
      RATE_LIMIT_WRITE_PER_MINUTE: '1000',
    },
  });
  const created = await createTeam(
    database.db,
    { name: 'Metrics', adminEmail: 'a@metrics.test' },
    systemClock,
  );
  api = apiClient(app.baseUrl, created.key.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await database?.close();
});

const CREATE = { http_request_method: 'POST', http_route: '/v1/cases/', http_response_status_code: '201' };

describe('/metrics', () => {
  it('counts what a known workload does, exactly', async () => {
    const before = await scrape(metricsPort);

    // 10 creations: +10 cases in live mode, +10 requests under the route's template.
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await api.post<{ id: string; public_id: string }>('/v1/cases/', {
        subject_email: `person.${i}@metrics.test`,
        verification_methods: { email: true },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const afterCreates = await scrape(metricsPort);
    expect(total(afterCreates, 'vouch_cases_created_total', { mode: 'live' })).toBe(
      total(before, 'vouch_cases_created_total', { mode: 'live' }) + 10,
    );
    expect(total(afterCreates, 'http_server_request_duration_seconds_count', CREATE)).toBe(
      total(before, 'http_server_request_duration_seconds_count', CREATE) + 10,
    );

    // 3 deliveries whose receiver fails them: the failure outcome +3, each first attempt's lag
    // observed once, and the delivery queue empty again (the retries wait an hour).
    receiver.replies.set('/failing', () => ({ status: 500 }));
    const endpoint = await api.post('/v1/webhooks/endpoints/', {
      url: receiver.url('/failing'),
      events: ['case.created'],
    });
    expect(endpoint.status).toBe(201);
    const beforeDeliveries = await scrape(metricsPort);
    for (let i = 0; i < 3; i++) {
      const res = await api.post('/v1/cases/', {
        subject_email: `delivered.${i}@metrics.test`,
        verification_methods: { email: true },
      });
      expect(res.status).toBe(201);
    }
    await receiver.waitFor('/failing', 3);
    const afterDeliveries = await eventually(async () => {
      const samples = await scrape(metricsPort);
      const failures =
        total(samples, 'vouch_webhook_deliveries_total', { outcome: 'failure' }) -
        total(beforeDeliveries, 'vouch_webhook_deliveries_total', { outcome: 'failure' });
      const queued = total(samples, 'vouch_jobs_queued', { queue: 'webhook-deliver' });
      return failures === 3 && queued === 0 && samples;
    }, 20_000);
    expect(total(afterDeliveries, 'vouch_webhook_deliveries_total', { outcome: 'success' })).toBe(
      total(beforeDeliveries, 'vouch_webhook_deliveries_total', { outcome: 'success' }),
    );
    expect(total(afterDeliveries, 'vouch_webhook_delivery_lag_seconds_count')).toBe(
      total(beforeDeliveries, 'vouch_webhook_delivery_lag_seconds_count') + 3,
    );
    expect(total(afterDeliveries, 'vouch_jobs_oldest_seconds', { queue: 'webhook-deliver' })).toBe(0);
    expect(total(afterDeliveries, 'vouch_cases_created_total', { mode: 'live' })).toBe(
      total(before, 'vouch_cases_created_total', { mode: 'live' }) + 13,
    );
    // The queued mails are counted (each case mails its subject) until the worker sends them.
    expect(afterDeliveries.some((sample) => sample.name === 'vouch_mail_queued')).toBe(true);

    // A rate-limited request: the read budget (3 a minute) spent, the next refused, +1.
    let refused = 0;
    for (let i = 0; i < 4; i++) {
      const res = await api.get(`/v1/cases/${ids[0]}/`);
      if (res.status === 429) refused += 1;
    }
    expect(refused).toBe(1);
    const afterLimit = await scrape(metricsPort);
    expect(total(afterLimit, 'vouch_rate_limited_total', { budget: 'read' })).toBe(
      total(before, 'vouch_rate_limited_total', { budget: 'read' }) + 1,
    );
    expect(
      total(afterLimit, 'http_server_request_duration_seconds_count', {
        http_request_method: 'GET',
        http_route: '/v1/cases/{id}/',
        http_response_status_code: '429',
      }),
    ).toBe(1);
  }, 90_000);

  it("labels pages by their template and what no route serves by none, and holds no one's data in a label", async () => {
    const created = await api.post<{ id: string; public_id: string }>('/v1/cases/', {
      subject_email: 'labels.person@metrics.test',
      verification_methods: { email: true },
    });
    expect(created.status).toBe(201);
    expect((await fetch(`${app.baseUrl}/v/${created.body.public_id}`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/nothing/here/${created.body.id}`)).status).toBe(404);
    // A request is counted once its connection has closed, a moment after its answer arrived.
    const page = {
      http_request_method: 'GET',
      http_route: '/v/{publicId}',
      http_response_status_code: '200',
    };
    const isNotFound = (sample: Sample) =>
      sample.name === 'http_server_request_duration_seconds_count' &&
      sample.labels.http_response_status_code === '404';
    const samples = await eventually(async () => {
      const scraped = await scrape(metricsPort);
      return scraped.some(isNotFound) && scraped;
    }, 5_000);
    expect(total(samples, 'http_server_request_duration_seconds_count', page)).toBe(1);
    const unmatched = samples.filter(isNotFound);
    expect(unmatched.length).toBeGreaterThan(0);
    for (const sample of unmatched) expect(sample.labels.http_route).toBeUndefined();

    const values = samples.flatMap((sample) => Object.values(sample.labels));
    for (const value of values) {
      expect(value).not.toMatch(/@/);
      expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/i);
      expect(value).not.toContain(created.body.public_id);
      expect(value).not.toContain(created.body.id);
    }
    // Routes are templates: literal segments or {names}.
    const routes = new Set(
      samples.flatMap((sample) => (sample.labels.http_route ? [sample.labels.http_route] : [])),
    );
    for (const route of routes) expect(route).toMatch(/^(\/([a-z0-9._-]+|\{[A-Za-z]+\}))*\/?$/);
  });

  it("serves the process's own series: CPU, memory, event loop, GC and its database connections", async () => {
    const samples = await scrape(metricsPort);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds_count',
    ]) {
      expect(
        samples.some((sample) => sample.name === name),
        name,
      ).toBe(true);
    }
    const used = total(samples, 'db_client_connections_usage', { state: 'used' });
    const idle = total(samples, 'db_client_connections_usage', { state: 'idle' });
    expect(used + idle).toBeGreaterThan(0);
    expect(used + idle).toBeLessThanOrEqual(total(samples, 'db_client_connections_max'));
    expect(samples.every((sample) => sample.labels.service_name === 'vouch-web')).toBe(true);
    expect(declaredTypes.get('http_server_request_duration_seconds')).toBe('histogram');
    expect(declaredTypes.get('vouch_webhook_delivery_lag_seconds')).toBe('histogram');
    expect(declaredTypes.get('vouch_cases_created_total')).toBe('counter');
    expect(declaredTypes.get('vouch_jobs_queued')).toBe('gauge');
    expect(declaredTypes.get('db_client_connections_usage')).toBe('gauge');
  });

  it('is never served on the public port', async () => {
    expect((await fetch(`${app.baseUrl}/metrics`)).status).toBe(404);
  });

  it('a worker whose METRICS_PORT is taken serves its metrics on HEALTH_PORT alone, and says so', async () => {
    const worker = await startWorkerProcess({
      databaseUrl: database.url,
      env: { METRICS_PORT: String(metricsPort) },
    });
    try {
      expect(worker.logs()).toContain('metrics are served on HEALTH_PORT only');
      const samples = await scrape(worker.healthPort);
      expect(samples.some((sample) => sample.labels.service_name === 'vouch-worker')).toBe(true);
      expect(samples.some((sample) => sample.name === 'vouch_jobs_queued')).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  it('refuses to start a web process, saying why in one line, when its METRICS_PORT is taken', async () => {
    const refused = await startApp({
      databaseUrl: database.url,
      env: { METRICS_PORT: String(metricsPort), LOG_LEVEL: 'error' },
    }).then(
      async (started) => {
        await started.stop();
        return '';
      },
      (error: unknown) => String(error),
    );
    expect(refused).toMatch(/app exited with 1/);
    expect(refused).toContain(`METRICS_PORT: cannot listen on ${metricsPort} (EADDRINUSE)`);
  });
});

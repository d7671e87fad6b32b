import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ConnectionUsage } from '@/db/connection-usage';

/**
 * What a process counts for Prometheus (`GET /metrics`, server/platform/metrics/metrics-server.ts),
 * named and labelled as OpenTelemetry's semantic conventions read in Prometheus form. Code records
 * through the functions below, never through prom-client: when metrics are off (METRICS_PORT=0)
 * nothing is registered and each record is one check.
 *
 * No label ever holds a personal value, an id or a raw path: routes are templates
 * (route-template.ts), budgets and outcomes come from fixed lists.
 *
 * Kept on `globalThis`: Next.js bundles its own copy of this module for the routes it serves, and
 * a count made there must land in the process's one registry.
 */
interface Instruments {
  registry: Registry;
  requestDuration: Histogram<'http_request_method' | 'http_route' | 'http_response_status_code'>;
  casesCreated: Counter<'mode'>;
  webhookDeliveries: Counter<'outcome'>;
  deliveryLag: Histogram;
  rateLimited: Counter<'budget'>;
}

const holder = globalThis as { [key: symbol]: Instruments | undefined };
const HOLDER = Symbol.for('vouch.metrics');

/** OpenTelemetry's advised boundaries for HTTP durations, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** From an event's commit to its delivery's first attempt: seconds to an outage's hours. */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400];

export type DeliveryOutcome = 'success' | 'failure' | 'dead_letter';

/**
 * Turns metrics on for this process: its registry with the process's CPU, memory, event-loop delay
 * and GC, and the service's own series. Called once by the process's entry; idempotent.
 */
export function enableMetrics(role: 'web' | 'worker'): Registry {
  const existing = holder[HOLDER];
  if (existing) return existing.registry;
  const registry = new Registry();
  registry.setDefaultLabels({ service_name: `vouch-${role}` });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const instruments: Instruments = {
    registry,
    requestDuration: new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP server requests, by method, route template and status.',
      labelNames: ['http_request_method', 'http_route', 'http_response_status_code'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    casesCreated: new Counter({
      name: 'vouch_cases_created_total',
      help: 'Cases created (committed), by mode: live or test.',
      labelNames: ['mode'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'vouch_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: success, failure (retried later) or dead_letter (given up).',
      labelNames: ['outcome'],
      registers,
    }),
    deliveryLag: new Histogram({
      name: 'vouch_webhook_delivery_lag_seconds',
      help: "Seconds from an event's commit to its delivery's first attempt.",
      buckets: LAG_BUCKETS,
      registers,
    }),
    rateLimited: new Counter({
      name: 'vouch_rate_limited_total',
      help: 'Requests refused by a rate limit, by budget.',
      labelNames: ['budget'],
      registers,
    }),
  };
  holder[HOLDER] = instruments;
  return registry;
}

/** This process's registry, or none when metrics are off. */
export function metricsRegistry(): Registry | undefined {
  return holder[HOLDER]?.registry;
}

/**
 * One HTTP request answered: `method` one the web process speaks or `_OTHER` (as the conventions
 * say), `route` its template, or null when none matched.
 */
export function recordRequest(method: string, route: string | null, status: number, seconds: number): void {
  const instruments = holder[HOLDER];
  if (!instruments) return;
  instruments.requestDuration.observe(
    {
      http_request_method: method,
      ...(route ? { http_route: route } : {}),
      http_response_status_code: status,
    },
    seconds,
  );
}

export function recordCasesCreated(livemode: boolean, count: number): void {
  holder[HOLDER]?.casesCreated.inc({ mode: livemode ? 'live' : 'test' }, count);
}

export function recordDeliveryAttempt(outcome: DeliveryOutcome): void {
  holder[HOLDER]?.webhookDeliveries.inc({ outcome });
}

export function recordDeliveryLag(seconds: number): void {
  holder[HOLDER]?.deliveryLag.observe(Math.max(0, seconds));
}

export function recordRateLimited(budget: string): void {
  holder[HOLDER]?.rateLimited.inc({ budget });
}

/**
 * The pool's connections (`db_client_connections_usage{state}`, `db_client_connections_max`), read
 * from `usage` at each scrape.
 */
export function watchDatabaseConnections(usage: () => ConnectionUsage): void {
  const registry = metricsRegistry();
  if (!registry) return;
  new Gauge({
    name: 'db_client_connections_usage',
    help: "The database pool's connections, by state: used (serving a statement or a transaction) or idle.",
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const now = usage();
      this.set({ state: 'used' }, now.used);
      this.set({ state: 'idle' }, now.idle);
    },
  });
  new Gauge({
    name: 'db_client_connections_max',
    help: 'The most connections the database pool opens.',
    registers: [registry],
    collect() {
      this.set(usage().max);
    },
  });
}

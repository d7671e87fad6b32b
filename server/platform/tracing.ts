import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Tracing, OpenTelemetry's: off unless the operator names a collector (OTEL_EXPORTER_OTLP_ENDPOINT
 * or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Off, the SDK is never loaded and every helper here is
 * one check of a flag: no exporter, no span objects, no context switches. On, OpenTelemetry's Node
 * SDK reads the standard `OTEL_*` variables itself (protocol `http/protobuf` or `http/json`,
 * sampler, batch timings, resource, propagators); only traces leave, never its metrics or logs
 * (Prometheus reads the metrics), unless the operator asks for them.
 *
 * No span carries a personal value: the attributes set here and by the callers of `inSpan` are
 * routes, operations, tables, statement texts without their values, counts and statuses.
 *
 * The flag lives on `globalThis`: Next.js bundles its own copy of this module, and the routes it
 * serves must see tracing on when the process turned it on (the OpenTelemetry API keeps its own
 * registry global the same way; db/statement-spans.ts reads the same flag).
 */
const FLAG = Symbol.for('vouch.tracing');
const state = globalThis as { [FLAG]?: { shutdown: () => Promise<void> } };

/** Whether this process exports traces. */
export function tracingOn(): boolean {
  return state[FLAG] !== undefined;
}

/** Whether the environment names a collector, as OpenTelemetry's exporters read it. */
export function tracingConfigured(source: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(source.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || source.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** OpenTelemetry's API hands its calls to the SDK once one is registered, so this can be made early. */
const vouchTracer = trace.getTracer('vouch');
export const tracer = () => vouchTracer;

/**
 * Starts this process's tracing when a collector is named, the SDK loaded only then. `role` names
 * the service (`vouch-web`, `vouch-worker`) unless OTEL_SERVICE_NAME does.
 */
export async function startTracing(role: 'web' | 'worker'): Promise<void> {
  if (!tracingConfigured() || state[FLAG]) return;
  process.env.OTEL_SERVICE_NAME ||= `vouch-${role}`;
  process.env.OTEL_METRICS_EXPORTER ||= 'none';
  process.env.OTEL_LOGS_EXPORTER ||= 'none';
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({ instrumentations: [] });
  sdk.start();
  state[FLAG] = { shutdown: () => sdk.shutdown() };
}

/** Sends the spans still batched, and stops: a stopping process loses none it recorded. */
export async function stopTracing(): Promise<void> {
  await state[FLAG]?.shutdown();
}

/** Marks `span` failed by `error`'s kind (its class's name: never its message, which may hold data). */
export function spanFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', error instanceof Error ? error.constructor.name : '_OTHER');
}

/**
 * Runs `work` in a span named `name` (a child of the active one), ending it when `work` settles
 * and marking it failed when it throws. Tracing off, runs `work` alone.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return work(undefined);
  const span = tracer().startSpan(name, {
    kind: options.kind ?? SpanKind.INTERNAL,
    attributes: options.attributes,
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(span));
  } catch (error) {
    spanFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The active span's ids, for log lines (`trace_id`, `span_id`); none while no span is active. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!tracingOn()) return undefined;
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

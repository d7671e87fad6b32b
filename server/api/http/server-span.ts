import type { IncomingMessage } from 'node:http';
import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer } from '@/server/platform/tracing';

/**
 * A request's SERVER span (tracing on), continuing the caller's trace when it sent a W3C
 * `traceparent`. Named and labelled once the route is known (`finishServerSpan`); it never
 * carries the path itself, which may hold a case's id or a link's token, nor the client's address.
 */
export function startServerSpan(
  req: IncomingMessage,
  /** One the web process speaks, or `_OTHER`. */
  method: string,
): {
  span: Span;
  /** Runs `work` with the span active. */
  run: <T>(work: () => T) => T;
  /** `listener` bound to the span's context, for events emitted outside it (the response's close). */
  bind: <F extends (...args: never[]) => unknown>(listener: F) => F;
} {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer().startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.scheme': 'http',
        'network.protocol.version': req.httpVersion,
      },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  return {
    span,
    run: (work) => context.with(active, work),
    bind: (listener) => context.bind(active, listener),
  };
}

/** Ends the span with the route's template (none when no route served it) and the answer's status. */
export function finishServerSpan(span: Span, method: string, route: string | null, status: number): void {
  if (route) {
    span.setAttribute('http.route', route);
    span.updateName(`${method === '_OTHER' ? 'HTTP' : method} ${route}`);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', String(status));
  }
  span.end();
}

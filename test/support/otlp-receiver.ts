import { createServer, type Server } from 'node:http';

/** A span as an OTLP/JSON export carries it, flattened with its resource's service name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number };
}

export interface OtlpReceiver {
  url: string;
  port: number;
  /** Every span exported as OTLP/JSON, in arrival order. */
  spans: ReceivedSpan[];
  /** Every export, its path and content type (protobuf bodies are counted, not decoded). */
  exports: Array<{ path: string; contentType: string; bytes: number }>;
  close: () => Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

function plainValue(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

/**
 * An OpenTelemetry collector's OTLP/HTTP receiver, as far as a test needs one: it answers every
 * export 200 and keeps the spans of OTLP/JSON ones (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`).
 */
export async function startOtlpReceiver(
  options: { port?: number; host?: string } = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: OtlpReceiver['exports'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type'] ?? '');
      exports.push({ path: req.url ?? '/', contentType, bytes: body.length });
      if (req.url === '/v1/traces' && contentType.startsWith('application/json')) {
        const request = JSON.parse(body.toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: Array<{
              spans?: Array<{
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                kind: number;
                attributes?: KeyValue[];
                links?: Array<{ traceId: string; spanId: string }>;
                status?: { code?: number };
              }>;
            }>;
          }>;
        };
        for (const resourceSpans of request.resourceSpans ?? []) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service: String(resource['service.name'] ?? ''),
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                resource,
                links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
                status: span.status ?? {},
              });
            }
          }
        }
      }
      res.writeHead(200, {
        'Content-Type': contentType.startsWith('application/json')
          ? 'application/json'
          : 'application/x-protobuf',
      });
      res.end(contentType.startsWith('application/json') ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    spans,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

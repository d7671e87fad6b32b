import { type Attributes, context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * A span per database statement while tracing is on (server/platform/tracing: the same global
 * flag, since this layer sits below it): named and described as OpenTelemetry's database
 * conventions say, `db.query.text` being the statement as sent, with `$n` where its values go, so
 * no value (a name, an e-mail, an answer) ever reaches a span.
 */
const FLAG = Symbol.for('vouch.tracing');

export function tracingStatements(): boolean {
  return (globalThis as { [FLAG]?: unknown })[FLAG] !== undefined;
}

const OPERATION =
  /^\s*(?:with\b[\s\S]*?\)\s*)?(select|insert|update|delete|with|begin|commit|rollback|savepoint|release|set|lock|copy|values|call|do)\b/i;
const TARGET =
  /\b(?:from|into|update|join)\s+((?:"[^"]+"|[a-z_][a-z0-9_]*)(?:\.(?:"[^"]+"|[a-z_][a-z0-9_]*))?)/i;

interface Described {
  name: string;
  attributes: Attributes;
}

/**
 * What a statement's spans are named and say, worked out once per statement text: the service
 * sends a few hundred distinct texts (values travel apart), so the cache stays small; a bulk
 * statement's text changes with its row count, so past MAX_DESCRIBED texts none is added.
 */
const described = new Map<string, Described>();
const MAX_DESCRIBED = 1_000;

/** A write of a WITH's part: `insert into`, `update` or `delete from` and its table. */
const CTE_WRITE =
  /\bas\s*\(\s*(insert\s+into|update|delete\s+from)\s+((?:"[^"]+"|[a-z_][a-z0-9_]*)(?:\.(?:"[^"]+"|[a-z_][a-z0-9_]*))?)/gi;

/**
 * The statement's operation (`SELECT`, `INSERT`, …) and the table it names first, if any; and for
 * a statement whose WITH parts write several tables (a creation's writes), its summary as
 * OpenTelemetry's `db.query.summary` says it: each write's operation and table, in order
 * (`INSERT usage_counters UPDATE teams INSERT cases …`).
 */
export function describeStatement(text: string): {
  operation: string;
  table: string | undefined;
  summary: string | undefined;
} {
  const operation = (OPERATION.exec(text)?.[1] ?? 'QUERY').toUpperCase();
  const table = TARGET.exec(text)?.[1]?.replaceAll('"', '');
  const writes = /^\s*with\b/i.test(text)
    ? [...text.matchAll(CTE_WRITE)].map(
        ([, verb = '', target = '']) =>
          `${verb.split(/\s+/)[0]?.toUpperCase()} ${target.replaceAll('"', '')}`,
      )
    : [];
  return { operation, table, summary: writes.length > 1 ? writes.join(' ') : undefined };
}

function describedSpan(text: string): Described {
  const known = described.get(text);
  if (known) return known;
  const { operation, table, summary } = describeStatement(text);
  const made: Described = {
    name: summary ?? (table ? `${operation} ${table}` : operation),
    attributes: {
      'db.system.name': 'postgresql',
      'db.operation.name': operation,
      ...(summary ? { 'db.query.summary': summary } : table ? { 'db.collection.name': table } : {}),
      'db.query.text': text,
    },
  };
  if (described.size < MAX_DESCRIBED) described.set(text, made);
  return made;
}

/** OpenTelemetry's API hands its calls to the SDK once one is registered, so this can be made early. */
const tracer = trace.getTracer('vouch');

type Traced = Promise<unknown> & { handle: () => Promise<void>; executed: boolean };

/**
 * Traces `query` (a postgres.js query, which starts when first awaited) from its start, under the
 * span active then, to its settling.
 */
export function traceStatement<Q>(query: Q, text: string): Q {
  const traced = query as unknown as Traced;
  const handle = traced.handle;
  traced.handle = function (this: Traced) {
    if (!this.executed) {
      const { name, attributes } = describedSpan(text);
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active());
      // Promise's own `then`: the query's would start it again.
      Promise.prototype.then.call(
        this,
        () => span.end(),
        (error: { code?: unknown }) => {
          span.setStatus({ code: SpanStatusCode.ERROR });
          if (typeof error?.code === 'string') span.setAttribute('db.response.status_code', error.code);
          span.end();
        },
      );
    }
    return handle.call(this);
  };
  return query;
}

import { inspect } from 'node:util';
import { pino } from 'pino';
import { currentRequestScope } from './request-scope';
import { sourceMappedFrames } from './stack-sources';
import { activeTraceIds } from './tracing';

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies Level[];

/**
 * Field names that never reach a line, at the top of the fields or one object down, whoever wrote
 * them: a defence behind the rule below, not a replacement for it.
 */
const SECRET_FIELDS = ['password', 'token', 'secret', 'api_key', 'authorization', 'cookie', 'params'];

/**
 * One JSON line per entry (pino), `{"level":"info","time":"<ISO>",...fields,"message":"..."}`:
 * debug and info on stdout, warn and error on stderr. A line written while serving a request
 * carries the request's id (`request_id`, the value of the response's Request-Id header), read
 * from the request scope by the mixin: the scope lives on `globalThis`, so the routes' bundles
 * and the process's own modules, each with its own instance of this module, all see it.
 *
 * Nothing secret may reach a line: no mail bodies, links, tokens, codes, passwords, keys, and no
 * SQL parameters (they hold people's data). Errors go through `errorFields`.
 */
const pinoLogger = pino(
  {
    level: LEVELS.includes(process.env.LOG_LEVEL ?? '') ? process.env.LOG_LEVEL : 'info',
    base: null,
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // The request's id, and while a span is active (tracing on) its trace's and its own.
    mixin: () => {
      const scope = currentRequestScope();
      const ids = activeTraceIds();
      if (!scope) return ids ?? {};
      return ids ? { request_id: scope.requestId, ...ids } : { request_id: scope.requestId };
    },
    redact: {
      paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)],
      censor: '[not logged]',
    },
  },
  pino.multistream(
    [
      { level: 'debug', stream: process.stdout },
      { level: 'warn', stream: process.stderr },
    ],
    // Each line goes only to the stream of the highest level it reaches.
    { dedupe: true },
  ),
);

/**
 * A log destination whose reader has gone (EPIPE: the pipe to a supervisor that died) is given up
 * on, and every line after it dropped. Unheard, its error reaches Next's uncaughtException handler,
 * which logs it, which fails again: such a web process spun a core and stopped answering. One
 * listener per process (each bundle has its own instance of this module), hence the global flag.
 */
const DESTINATION_GONE = Symbol.for('vouch.log-destination-gone');
const processState = globalThis as unknown as Record<symbol, { gone: boolean } | undefined>;
const destination = processState[DESTINATION_GONE] ?? { gone: false };
if (!processState[DESTINATION_GONE]) {
  processState[DESTINATION_GONE] = destination;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {
      destination.gone = true;
    });
  }
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  if (destination.gone) return;
  if (fields) pinoLogger[level](fields, message);
  else pinoLogger[level](message);
}

/**
 * Message first, fields second (pino takes them the other way round): the order every call site
 * in the service was written in.
 */
export const logger = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
};

/**
 * drizzle wraps a failed statement in an error whose message (and so its stack's first line)
 * is "Failed query: <sql> params: <every parameter>": the parameters are people's e-mail
 * addresses, names and answers. Such an error is described by its cause, the database's own
 * error, whose message names no value (postgres.js keeps the statement and its parameters off
 * the message).
 */
function isFailedQuery(error: Error): boolean {
  return 'params' in error && 'query' in error;
}

/** The frames of a stack, without its message (which may span lines, and quote a statement). */
function stackFrames(stack: string | undefined): string | undefined {
  const frames = stack?.split('\n').filter((line) => /^\s+at /.test(line));
  return frames?.length ? sourceMappedFrames(frames.join('\n')) : undefined;
}

/** An error as log fields: its message, its SQLSTATE when the database raised it, and where. */
export function errorFields(error: unknown): { error: string; sqlstate?: string; stack?: string } {
  if (!(error instanceof Error)) return { error: String(error) };
  const described = isFailedQuery(error) && error.cause instanceof Error ? error.cause : error;
  const sqlstate = (described as { code?: unknown }).code;
  return {
    error: `${described.name}: ${described.message}`,
    ...(typeof sqlstate === 'string' && /^[0-9A-Z]{5}$/.test(sqlstate) ? { sqlstate } : {}),
    stack: stackFrames(error.stack),
  };
}

/**
 * A failed statement's parameters wherever a library wrote them into text ("params: a@b.c,..."
 * in drizzle's message): the parameters are dropped, the statement's shape stays.
 */
function withoutStatementParameters(text: string): string {
  return text.replace(/\bparams: .*$/gm, 'params: [not logged]');
}

/** What a library passed to a log call, as text that holds no statement parameter. */
function describeLogArguments(args: readonly unknown[]): string {
  const parts = args.map((arg) => {
    if (arg instanceof Error) {
      const fields = errorFields(arg);
      return fields.stack ? `${fields.error}\n${fields.stack}` : fields.error;
    }
    return typeof arg === 'string' ? arg : inspect(arg, { depth: 3, breakLength: Infinity });
  });
  return withoutStatementParameters(parts.join(' '));
}

const CONSOLE_LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error' } as const;

/**
 * Sends what libraries print through `console` (Next.js's errors of a route, its start-up lines,
 * better-auth's warnings) through this logger: one JSON line each, carrying the request's id when
 * written while serving one, and never a failed statement's parameters, which Next prints as part
 * of a route's uncaught error. Installed once by each process's entry point. pino has no console
 * capture of its own (its `err` serializer would also keep the statement in the message).
 */
export function routeConsoleThroughLogger(): void {
  for (const [method, level] of Object.entries(CONSOLE_LEVELS)) {
    (console as unknown as Record<string, (...args: unknown[]) => void>)[method] = (...args) =>
      write(level, describeLogArguments(args));
  }
}

/** better-auth's logger option: its lines, through this logger. */
export const libraryLogger = {
  log: (level: Level, message: string, ...args: unknown[]) =>
    write(level, describeLogArguments([message, ...args])),
};

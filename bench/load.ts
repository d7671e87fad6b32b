import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** One request the generator sends; built per request so load spreads over teams and cases. */
export interface Target {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The status that counts as success (default: any 2xx). */
  expectStatus?: number;
}

export interface LoadResult {
  /** Requests scheduled (open loop) or sent (closed loop) inside the measured window. */
  sent: number;
  ok: number;
  errors: number;
  /** Successful requests per second over the measured window. */
  throughput: number;
  /** Milliseconds; for the open loop measured from the scheduled send time. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** First few non-2xx answers or socket errors, for the report. */
  errorSamples: string[];
  /** Answers received during the whole phase, warm-up included: the server's work, for CPU per request. */
  answered: number;
}

interface Endpoint {
  host: string;
  port: number;
}

export interface Outcome {
  ok: boolean;
  /** The server sent a response (any status), as opposed to a socket error or timeout. */
  answered: boolean;
  detail?: string;
}

/**
 * Keep-alive agent: every request reuses a warm connection, as a real API client would. The
 * socket cap is high so a latency spike in an open-loop run opens more connections instead of
 * queueing requests inside the generator (which would hide the server's delay).
 */
export function keepAliveAgent(maxSockets = 256): http.Agent {
  // FIFO: requests rotate through the free sockets. Node's default (LIFO) reuses the few hottest
  // and leaves the rest idle past the server's keep-alive timeout (5 s), and a request sent on a
  // socket the server is closing at that instant fails with ECONNRESET / socket hang up.
  return new http.Agent({ keepAlive: true, maxSockets, keepAliveMsecs: 1000, scheduling: 'fifo' });
}

/**
 * A request still unanswered after this long is given up and counted as an error (its latency as
 * measured so far stays in the figures): an overloaded server must not stretch a phase, and so
 * the whole run, without bound.
 */
const REQUEST_TIMEOUT_MS = 5000;
/**
 * Closed-loop clients wait longer: a client that gives up and sends another request while the
 * server still works on the first only adds abandoned work, and on a starved machine that spirals.
 */
const CLOSED_LOOP_TIMEOUT_MS = 30_000;

/** Requests sent through each agent and not yet settled, so a phase can abandon them at its end. */
const openRequests = new WeakMap<http.Agent, Set<http.ClientRequest>>();

/**
 * Ends a phase: every request still open is destroyed, including those still queued in the agent
 * for a free socket (their timeout only starts once they have one). Destroying the agent alone
 * left those queued, and they were sent during the next phase, to the server's and the figures'
 * cost.
 */
function abandon(agent: http.Agent): void {
  for (const req of openRequests.get(agent) ?? []) req.destroy();
  agent.destroy();
}

function send(
  endpoint: Endpoint,
  agent: http.Agent,
  target: Target,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...target.headers };
    if (target.body !== undefined) headers['content-length'] = Buffer.byteLength(target.body);
    const req = http.request(
      { host: endpoint.host, port: endpoint.port, method: target.method, path: target.path, headers, agent },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (status >= 300 && status !== target.expectStatus) chunks.push(chunk);
        });
        res.on('end', () => {
          const expected =
            target.expectStatus === undefined
              ? status >= 200 && status < 300
              : status === target.expectStatus;
          if (expected) resolve({ ok: true, answered: true });
          else {
            resolve({
              ok: false,
              answered: true,
              detail: `${status} ${Buffer.concat(chunks).toString().slice(0, 200)}`,
            });
          }
        });
        res.on('error', (error) => resolve({ ok: false, answered: false, detail: String(error) }));
      },
    );
    let open = openRequests.get(agent);
    if (!open) {
      open = new Set();
      openRequests.set(agent, open);
    }
    open.add(req);
    req.on('close', () => open.delete(req));
    req.on('error', (error) => resolve({ ok: false, answered: false, detail: String(error) }));
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve({ ok: false, answered: false, detail: `no answer within ${timeoutMs} ms` });
    });
    if (target.body !== undefined) req.write(target.body);
    req.end();
  });
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

function summarise(
  latencies: number[],
  sent: number,
  errors: string[],
  windowMs: number,
  answered: number,
): LoadResult {
  const sorted = Float64Array.from(latencies).sort();
  const asArray = Array.from(sorted);
  return {
    sent,
    ok: latencies.length - errors.length,
    errors: errors.length,
    throughput: ((latencies.length - errors.length) * 1000) / windowMs,
    p50: percentile(asArray, 50),
    p95: percentile(asArray, 95),
    p99: percentile(asArray, 99),
    max: asArray.length > 0 ? (asArray[asArray.length - 1] as number) : Number.NaN,
    errorSamples: [...new Set(errors)].slice(0, 3),
    answered,
  };
}

/** Connections the open loop may use at once; requests beyond them wait in the generator. */
const OPEN_LOOP_CONNECTIONS = 64;
/** After the last scheduled request, how long answers are still awaited before the rest count as errors. */
const DRAIN_MS = 5000;

/**
 * Open loop: request i is due at start + i/rate whatever happened to earlier ones, and its latency
 * runs from that scheduled instant. A slow server therefore shows up as latency, never as the
 * generator quietly sending less — no coordinated omission. Like wrk2, at most
 * OPEN_LOOP_CONNECTIONS requests are in flight: when the server falls behind, due requests queue
 * in the generator (their clock keeps running) instead of piling thousands of abandoned requests
 * onto the server that would spill into the next phase. Requests due during the warm-up are sent
 * but not counted; any still unanswered DRAIN_MS after the schedule ends are counted as errors
 * with the latency they had reached.
 */
export async function openLoop(options: {
  endpoint: Endpoint;
  rate: number;
  warmupMs: number;
  durationMs: number;
  target: (i: number) => Target;
}): Promise<LoadResult> {
  const agent = keepAliveAgent(OPEN_LOOP_CONNECTIONS);
  const interval = 1000 / options.rate;
  const total = Math.floor(((options.warmupMs + options.durationMs) * options.rate) / 1000);
  const measureFrom = options.warmupMs;
  const latencies: number[] = [];
  const errors: string[] = [];
  const unanswered = new Map<number, number>();
  let sent = 0;
  let answered = 0;
  const start = performance.now() + 20;
  let i = 0;
  let allAnswered: () => void = () => {};

  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        const index = i;
        const scheduled = start + index * interval;
        const counted = index * interval >= measureFrom;
        if (counted) {
          sent++;
          unanswered.set(index, scheduled);
        }
        send(options.endpoint, agent, options.target(index)).then((outcome) => {
          if (outcome.answered) answered++;
          if (!counted || !unanswered.delete(index)) return;
          latencies.push(performance.now() - scheduled);
          if (!outcome.ok) errors.push(outcome.detail ?? 'error');
          if (unanswered.size === 0 && i >= total) allAnswered();
        });
        i++;
      }
      if (i >= total) {
        done();
        return;
      }
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    tick();
  });
  if (unanswered.size > 0) {
    await new Promise<void>((resolve) => {
      allAnswered = resolve;
      setTimeout(resolve, DRAIN_MS);
    });
  }
  const now = performance.now();
  for (const scheduled of unanswered.values()) {
    latencies.push(now - scheduled);
    errors.push(`no answer by the end of the phase (+${DRAIN_MS / 1000} s)`);
  }
  unanswered.clear();
  abandon(agent);
  return summarise(latencies, sent, errors, options.durationMs, answered);
}

/**
 * Closed loop: `concurrency` clients each run their next request as soon as the previous one
 * answers. Measures the most the server sustains; latency here includes no queueing in the
 * generator because each client has one request in flight. `run` is one request: over HTTP
 * (closedLoop), or a function called in this process (the database ceiling of bench/api.ts).
 */
export async function closedLoopOf(options: {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  run: (i: number) => Promise<Outcome>;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let sent = 0;
  let answered = 0;
  let i = 0;
  const begin = performance.now();
  const measureFrom = begin + options.warmupMs;
  const end = measureFrom + options.durationMs;

  const client = async () => {
    for (;;) {
      const started = performance.now();
      if (started >= end) return;
      const outcome = await options.run(i++);
      const finished = performance.now();
      if (outcome.answered) answered++;
      // Only requests that both started and finished inside the window count, so the
      // throughput figure is the window's own.
      if (started >= measureFrom && finished <= end) {
        sent++;
        latencies.push(finished - started);
        if (!outcome.ok) errors.push(outcome.detail ?? 'error');
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  return summarise(latencies, sent, errors, options.durationMs, answered);
}

/** The closed loop over HTTP, each client on a kept-alive connection. */
export async function closedLoop(options: {
  endpoint: Endpoint;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  target: (i: number) => Target;
}): Promise<LoadResult> {
  const agent = keepAliveAgent(options.concurrency);
  const result = await closedLoopOf({
    ...options,
    run: (i) => send(options.endpoint, agent, options.target(i), CLOSED_LOOP_TIMEOUT_MS),
  });
  abandon(agent);
  return result;
}

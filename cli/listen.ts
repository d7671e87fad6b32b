import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import ipaddr from 'ipaddr.js';
import { deliveryHeaders, newSigningSecret } from '@/server/webhooks/signature';

/**
 * `npm run --silent listen -- --forward-to http://localhost:4000/hook`: webhooks on a developer's
 * own machine, where Vouch cannot reach (a receiver on localhost is no public HTTPS address). It
 * follows the events API of the Vouch at VOUCH_URL with an API key (VOUCH_API_KEY) and forwards
 * each new event to the local URL, signed exactly as a delivery is (X-Service-* and Standard
 * Webhooks headers) with a secret printed at start (or VOUCH_LISTEN_SECRET), and prints each
 * forward and its answer. Stop it with Ctrl-C.
 *
 * The key goes only to the API's own origin, over https unless that origin is this machine: a
 * page's `next` link that points elsewhere is refused, not followed with the key. Secrets come from
 * the environment only, since a command line is visible to every user of the machine (`ps`).
 */
const USAGE = `usage: VOUCH_API_KEY=vouch_test_... npm run --silent listen -- --forward-to URL [--events TYPE,TYPE] [--api-url URL]

Forwards each new event of your Vouch to URL (a receiver on this machine), signed like a webhook
delivery, and prints each forward and the answer. Ctrl-C stops.

  --forward-to URL     where to send the events, http or https (e.g. http://localhost:4000/hook)
  --events TYPE,TYPE   only these event types (e.g. case.closed,case.failed); default: all
  --api-url URL        your Vouch, instead of VOUCH_URL

environment:
  VOUCH_API_KEY        the API key whose events are forwarded (vouch_test_... for test cases)
  VOUCH_URL            your Vouch (default http://localhost:3000)
  VOUCH_LISTEN_SECRET  a whsec_... secret to sign with instead of a new one each session`;

/** How often the events API is read. */
const POLL_MS = Number(process.env.LISTEN_POLL_MS ?? 1000);
/**
 * Events are stamped when their transaction starts and listed once it commits, so one can appear
 * after a newer one: each read reaches back this far, and ids already forwarded are skipped.
 */
const LOOKBACK_MS = 30_000;

interface Envelope {
  id: string;
  type: string;
  created_at: string;
}

interface EventPage {
  next: string | null;
  results: Envelope[];
}

/** A mistake in how the tool was started: said, with the usage. */
function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(1);
}

/** A session that cannot go on (the service unreachable, the key refused): said, and nothing more. */
function stop(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Whether a URL's host is this machine: the only place plain http may carry the key. */
function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

const OPTIONS = {
  'forward-to': { type: 'string' },
  'api-url': { type: 'string' },
  events: { type: 'string' },
  // Refused with a pointer to the environment variable rather than as unknown options.
  'api-key': { type: 'string' },
  secret: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The options, checked: the usage and exit 0 for help, the usage on stderr and exit 1 for a mistake. */
function parseOptions() {
  const { values, positionals, tokens } = parseArgs({
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  // Said in our words rather than the parser's, which suggests putting an unknown option after `--`.
  for (const token of tokens) {
    if (token.kind === 'option' && !Object.hasOwn(OPTIONS, token.name))
      fail(`unknown option ${token.rawName}`);
    if (token.kind === 'positional') fail(`unexpected argument "${token.value}"`);
  }
  try {
    return parseArgs({ options: OPTIONS, strict: true }).values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

/** VOUCH_API_URL, the name this tool read before VOUCH_URL: still read, with a warning. */
function deprecatedApiUrl(): string | undefined {
  const value = process.env.VOUCH_API_URL;
  if (value) process.stderr.write('VOUCH_API_URL is deprecated: set VOUCH_URL instead\n');
  return value;
}

const values = parseOptions();
if (values['api-key'] !== undefined) {
  fail(
    '--api-key is not accepted: a command line is visible to every user of this machine; set VOUCH_API_KEY',
  );
}
if (values.secret !== undefined) {
  fail(
    '--secret is not accepted: a command line is visible to every user of this machine; set VOUCH_LISTEN_SECRET',
  );
}
const forwardTo = values['forward-to'] ?? fail('--forward-to is required');
try {
  const url = new URL(forwardTo);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
} catch {
  fail(`--forward-to must be an http or https URL: ${forwardTo}`);
}
const apiKey = process.env.VOUCH_API_KEY || fail('an API key is required (VOUCH_API_KEY)');
const apiOrigin = (() => {
  const given = values['api-url'] || process.env.VOUCH_URL || deprecatedApiUrl() || 'http://localhost:3000';
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return fail(`the API URL is not a URL: ${given}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
    fail(
      `the API URL must be https (plain http only to this machine), so the key is never sent in the clear: ${given}`,
    );
  }
  return url;
})();
const apiUrl = `${apiOrigin.origin}${apiOrigin.pathname.replace(/\/+$/, '')}`;
const types = values.events?.split(',').filter(Boolean);
const secret = process.env.VOUCH_LISTEN_SECRET || newSigningSecret();

/** An API that names a page elsewhere is not one to keep following: the session stops. */
class ForeignPageError extends Error {}

/** The page a `next` link names, only when it is on the API's own origin: the key goes nowhere else. */
function sameOriginPage(next: string): string {
  const url = new URL(next, apiUrl);
  if (url.origin !== apiOrigin.origin) {
    throw new ForeignPageError(
      `the API named a next page on another origin (${url.origin}); the key is not sent there`,
    );
  }
  return url.toString();
}

/** Every event created since `since`, oldest first (the API lists newest first, 50 a page). */
async function eventsSince(since: Date): Promise<Envelope[]> {
  const found: Envelope[] = [];
  let next: string | null = `${apiUrl}/v1/events/?created_after=${encodeURIComponent(since.toISOString())}`;
  while (next) {
    const res: Response = await fetch(next, { headers: { authorization: `Bearer ${apiKey}` } }).catch(
      (error: unknown) => {
        throw new Error(
          `cannot reach Vouch at ${apiUrl} (${reasonOf(error)}): is it running there? VOUCH_URL sets where it is`,
        );
      },
    );
    const text = await res.text();
    if (!res.ok) throw new Error(`GET /v1/events/ answered ${res.status}: ${text.slice(0, 300)}`);
    const page = JSON.parse(text) as EventPage;
    found.push(...page.results);
    next = page.next === null ? null : sameOriginPage(page.next);
  }
  return found.reverse();
}

/** Why a fetch failed: undici's own error says only "fetch failed", its cause says why. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? error.cause.message : error.message;
}

async function forward(event: Envelope): Promise<string> {
  // The body is the envelope as the API returned it, which is byte for byte what a delivery sends.
  const body = JSON.stringify(event);
  const headers = deliveryHeaders({
    secret,
    body,
    eventType: event.type,
    deliveryId: randomUUID(),
    now: new Date(),
  });
  const started = performance.now();
  try {
    const res = await fetch(forwardTo, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return `${res.status} (${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    return `failed: ${reasonOf(error)}`;
  }
}

async function main(): Promise<never> {
  const started = new Date();
  // Checks the key (and the URL) once before waiting for anything.
  await eventsSince(started);
  process.stdout.write(
    `Forwarding ${types ? types.join(', ') : 'every'} event of ${apiUrl} to ${forwardTo}\n` +
      `Signing secret for this session: ${secret}\n` +
      'Ready. Ctrl-C stops.\n',
  );
  /** Event id -> created_at of everything forwarded within the look-back window. */
  const forwarded = new Map<string, number>();
  // Nothing is held that a stop could lose: an event forwarded twice is one a receiver must accept anyway.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
  for (;;) {
    const since = new Date(Math.max(started.getTime(), Date.now() - LOOKBACK_MS));
    for (const [id, createdAt] of forwarded) if (createdAt < since.getTime()) forwarded.delete(id);
    try {
      for (const event of await eventsSince(since)) {
        if (forwarded.has(event.id) || (types && !types.includes(event.type))) continue;
        forwarded.set(event.id, Date.parse(event.created_at));
        const answer = await forward(event);
        process.stdout.write(`${new Date().toISOString()}  ${event.type}  ${event.id}  -> ${answer}\n`);
      }
    } catch (error) {
      if (error instanceof ForeignPageError) stop(error.message);
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}; trying again\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

main().catch((error: unknown) => stop(error instanceof Error ? error.message : String(error)));

import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Operation } from 'openapi-backend';

/**
 * Checks every answer the integration suite gets from the apps it starts:
 * - an answer from /v1 (with or without its trailing slash) against the OpenAPI document the same
 *   app serves (/v1/openapi.json): the operation must list the status; the body must match that
 *   status's schema (openapi-backend, with a JSON Schema 2020-12 validator, as OpenAPI 3.1 says),
 *   error codes included; the headers it documents must have their documented form, and those it
 *   marks required must be there; a 204 has no body;
 * - any answer of 500 or more, on any path, fails the test that received it, unless the test
 *   declared it expects one (`expectServerErrors`: outage and overload tests): every operation
 *   documents 500 and 503, so the document alone would let a crash through.
 * Apps are known by port (test/support/app.ts registers each), so `localhost`, `127.0.0.1` and
 * `[::1]` reach the same checks. test/setup/openapi-conformance.ts puts it around `fetch` and
 * `node:http` in each test file; child processes a test starts (the `listen` CLI, the example
 * integration) load test/support/conformance-preload.ts, which reports to the parent through a file
 * (`conformanceForChild`). A test that received an answer the document does not describe fails.
 */

interface Violation {
  request: string;
  status: number;
  problems: string[];
}

const watchedPorts = new Set<number>();
/** The apps watched, the latest first: a webhook is checked against the first document that loads. */
const watchedOrigins: string[] = [];
/** The fetch the checks themselves use (never the checking one). */
let uncheckedFetch: typeof fetch = globalThis.fetch;
const documents = new Map<number, Promise<OpenAPIBackend>>();
const violations: Violation[] = [];
let serverErrorsExpected = false;
/** Where a child process reports what it found (its parent reads the file). */
const childLog = process.env.VOUCH_CONFORMANCE_LOG;

/** Have answers from this app (its base URL) checked: by its port, whatever host name reaches it. */
export function watchApp(baseUrl: string): void {
  const url = new URL(baseUrl);
  watchedPorts.add(portOf(url));
  watchedOrigins.unshift(url.origin);
  // Read now, while the app surely runs: a webhook's check then finds it at hand.
  loadDocument(url.origin, uncheckedFetch).catch(() => {});
}

/**
 * Forgets the apps watched so far and the validators compiled from their documents: each test file
 * starts its own apps, and the files of a worker share this module (isolate: false), so an answer
 * or a webhook must not be checked against an earlier file's app.
 */
export function forgetWatchedApps(): void {
  watchedPorts.clear();
  watchedOrigins.length = 0;
  documents.clear();
  webhookValidators.clear();
}

/** The running test expects answers of 500 or more (an outage, an overload): they do not fail it. */
export function expectServerErrors(): void {
  serverErrorsExpected = true;
}

function record(violation: Violation): void {
  if (childLog) appendFileSync(childLog, `${JSON.stringify(violation)}\n`);
  else violations.push(violation);
}

/** Where this process's children report what they found (one file per test file's process). */
const childReports = path.join(tmpdir(), `vouch-conformance-${process.pid}.jsonl`);

/**
 * The violations found since the last call, this process's and its children's; the next test
 * again expects no server errors.
 */
export function takeConformanceViolations(): Violation[] {
  serverErrorsExpected = false;
  const found = violations.splice(0);
  if (existsSync(childReports)) {
    const lines = readFileSync(childReports, 'utf8').split('\n').filter(Boolean);
    writeFileSync(childReports, '');
    for (const line of lines) found.push(JSON.parse(line) as Violation);
  }
  return found;
}

function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function isWatched(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname) && watchedPorts.has(portOf(url));
}

/** Whether the path is the REST API's, which the document describes (its own URL aside). */
function isApiPath(pathname: string): boolean {
  return (pathname === '/v1' || pathname.startsWith('/v1/')) && pathname !== '/v1/openapi.json';
}

function loadDocument(origin: string, realFetch: typeof fetch): Promise<OpenAPIBackend> {
  const port = portOf(new URL(origin));
  let loaded = documents.get(port);
  if (!loaded) {
    loaded = (async () => {
      const definition = await (await realFetch(`${origin}/v1/openapi.json`)).json();
      const api = new OpenAPIBackend({
        definition: withJsonSchemasCompiled(definition) as never,
        // openapi-backend checks a document against the OpenAPI 3.0 schema, which refuses 3.1's
        // `webhooks` and `const`; quick mode skips that check (the Redocly lint in
        // server/api/rest/openapi-document.test.ts checks the document as 3.1) and compiles each
        // operation's validators when first used.
        quick: true,
        strict: true,
        ignoreTrailingSlashes: false,
        validate: true,
        customizeAjv: (_ajv, options) => {
          const ajv = new Ajv2020({ ...options, strict: false, allErrors: true });
          addFormats.default(ajv);
          return ajv as never;
        },
      });
      await api.init();
      return api;
    })();
    documents.set(port, loaded);
    // A document that could not be read is not kept: the next answer tries again.
    loaded.catch(() => documents.delete(port));
  }
  return loaded;
}

type Content = Record<string, { schema?: unknown }>;
type Responses = Record<string, { content?: Content; 'x-media-type'?: string }>;

/**
 * openapi-backend compiles and checks only `application/json` bodies. An answer documented as
 * another JSON type (a record as `application/jose+json`) is compiled under application/json
 * too, so its body is still checked, and the type it must be sent as is kept beside it
 * (`x-media-type`) for the content-type check.
 */
function withJsonSchemasCompiled(definition: {
  paths?: Record<string, Record<string, { responses?: Responses }>>;
}) {
  for (const item of Object.values(definition.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation?.responses ?? {})) {
        const [type, ...others] = Object.keys(response.content ?? {});
        if (type && others.length === 0 && type !== 'application/json' && /\+json$/.test(type)) {
          response.content = { 'application/json': (response.content as Content)[type] ?? {} };
          response['x-media-type'] = type;
        }
      }
    }
  }
  return definition;
}

/** The media type an answer of `status` is documented as. */
function documentedMediaType(operation: Operation, status: number): string {
  const response = operation.responses?.[String(status)] as { 'x-media-type'?: string } | undefined;
  return response?.['x-media-type'] ?? 'application/json';
}

function requiredHeaders(operation: Operation, status: number): string[] {
  const response = operation.responses?.[String(status)] as
    | { headers?: Record<string, { required?: boolean }> }
    | undefined;
  return Object.entries(response?.headers ?? {})
    .filter(([, header]) => header.required)
    .map(([name]) => name.toLowerCase());
}

/** What a request no operation describes may be answered, with the code its body carries. */
const UNDESCRIBED_ANSWERS: Record<number, string> = {
  400: 'INVALID_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
};

async function check(api: OpenAPIBackend, method: string, url: URL, response: Response): Promise<string[]> {
  // The API accepts each path with or without its trailing slash; the document writes it.
  const match = (pathname: string) =>
    api.router.matchOperation({
      method: method.toLowerCase(),
      path: pathname,
      query: Object.fromEntries(url.searchParams),
      headers: {},
    });
  const operation =
    match(url.pathname) ?? (url.pathname.endsWith('/') ? undefined : match(`${url.pathname}/`));
  // A path the API does not have, or a method none of the path's operations has (HEAD
  // included): no operation describes it, and the only right answers are the JSON errors for
  // a path that is not valid percent-encoding (400), an unknown path (404) and a wrong method
  // (405), without a body for HEAD.
  if (!operation) {
    const expected = UNDESCRIBED_ANSWERS[response.status];
    if (!expected)
      return [`no operation describes ${method} ${url.pathname}, yet it answered ${response.status}`];
    if (method === 'HEAD') return (await response.text()) === '' ? [] : ['a HEAD answer with a body'];
    const body = (await response.json().catch(() => null)) as { code?: string } | null;
    return body?.code === expected ? [] : [`a ${response.status} without the ${expected} error body`];
  }
  const problems: string[] = [];
  const status = response.status;
  if (!operation.responses?.[String(status)]) {
    problems.push(`status ${status} is not documented for ${operation.operationId}`);
    return problems;
  }
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  let body: unknown = null;
  if (status === 204) {
    if (text !== '') problems.push('a 204 answer has a body');
  } else if (!contentType.startsWith(documentedMediaType(operation, status))) {
    problems.push(`content type ${contentType}, not ${documentedMediaType(operation, status)}`);
  } else {
    try {
      body = JSON.parse(text);
    } catch {
      problems.push('the body is not JSON');
    }
  }
  const bodyResult = api.validateResponse(body, operation, status);
  for (const error of bodyResult.errors ?? []) {
    problems.push(`body${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
  }
  const headers = Object.fromEntries(response.headers.entries());
  const headerResult = api.validateResponseHeaders(headers, operation, { statusCode: status });
  for (const error of headerResult.errors ?? []) {
    problems.push(`header ${error.instancePath} ${error.message}`);
  }
  for (const name of requiredHeaders(operation, status)) {
    if (!response.headers.has(name)) problems.push(`the required header ${name} is missing`);
  }
  return problems;
}

/** An error the client met because the request went away (aborted, or the app stopped): nothing to check. */
function isGoneError(error: unknown): boolean {
  return (
    error instanceof Error &&
    /abort|terminated|ECONNREFUSED|ECONNRESET|other side closed|socket hang up/i.test(
      `${error.name} ${error.message} ${String(error.cause)}`,
    )
  );
}

/** One answer of a watched app, checked: its status on every path, the document on /v1. */
async function checkAnswer(method: string, url: URL, response: Response, realFetch: typeof fetch) {
  const request = `${method} ${url.pathname}${url.search}`;
  if (response.status >= 500 && !serverErrorsExpected) {
    const text = await response
      .clone()
      .text()
      .catch(() => '');
    record({
      request,
      status: response.status,
      problems: [
        `answered ${response.status} (the test did not declare it expects one): ${text.slice(0, 300)}`,
      ],
    });
  }
  if (!isApiPath(url.pathname)) return;
  try {
    const api = await loadDocument(url.origin, realFetch);
    const problems = await check(api, method, url, response);
    if (problems.length > 0) record({ request, status: response.status, problems });
  } catch (error) {
    if (!isGoneError(error)) throw error;
  }
}

/** `fetch`, with every answer from a watched app checked (see the top of this file). */
export function conformanceCheckingFetch(realFetch: typeof fetch): typeof fetch {
  uncheckedFetch = realFetch;
  return async (input, init) => {
    const response = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (isWatched(url)) await checkAnswer(method, url, response.clone(), realFetch);
    return response;
  };
}

/**
 * An answer a test read through `node:http`, checked like one read through `fetch` once its body
 * has arrived (the check listens beside the test's own listeners).
 */
export function checkNodeHttpAnswer(
  method: string,
  url: URL,
  status: number,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> {
  if (!isWatched(url)) return Promise.resolve();
  const bodyless = method === 'HEAD' || status === 204 || status === 304;
  const response = new Response(bodyless ? null : new Uint8Array(body), { status, headers });
  return checkAnswer(method, url, response, uncheckedFetch).catch((error: unknown) => {
    record({
      request: `${method} ${url.pathname}`,
      status,
      problems: [`could not be checked: ${String(error)}`],
    });
  });
}

/**
 * The environment a child process needs to check its own calls to the apps and report them here:
 * NODE_OPTIONS loads the preload (through tsx) into it and every node process it starts.
 */
export function conformanceForChild(): Record<string, string> {
  const preload = new URL('./conformance-preload.ts', import.meta.url).pathname;
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import tsx --import ${preload}`.trim(),
    VOUCH_CONFORMANCE_LOG: childReports,
    VOUCH_CONFORMANCE_PORTS: [...watchedPorts].join(','),
  };
}

/** In a child process: the ports its parent watches. */
export function watchPortsFromParent(): void {
  for (const port of (process.env.VOUCH_CONFORMANCE_PORTS ?? '').split(',').filter(Boolean)) {
    watchedPorts.add(Number(port));
  }
}

const webhookValidators = new Map<string, ReturnType<Ajv2020['compile']>>();

/**
 * Checks a request a test's webhook receiver got against the `webhooks` section of the apps'
 * document: the event type has an entry, the body matches its envelope schema, and
 * the headers it lists as required are there. The receiver awaits it before it records the
 * request, so a test that saw the delivery sees its verdict; a webhook that cannot be checked (no
 * app watched, no document) is a violation too. Returns the problems found.
 */
export async function checkWebhookDelivery(
  headers: Record<string, unknown>,
  body: string,
): Promise<string[]> {
  const problems: string[] = [];
  let api: OpenAPIBackend | undefined;
  // Every app of a run serves the same document: the first that loads (an app since stopped
  // was read when it started).
  for (const origin of watchedOrigins) {
    api = await loadDocument(origin, uncheckedFetch).catch(() => undefined);
    if (api) break;
  }
  if (watchedOrigins.length === 0) problems.push('no app is watched, so the webhook cannot be checked');
  else if (!api) problems.push(`no watched app's document could be loaded (${watchedOrigins.join(', ')})`);
  let envelope: { type?: string } | null = null;
  try {
    envelope = JSON.parse(body) as { type?: string };
  } catch {
    problems.push('the body is not JSON');
  }
  const type = String(envelope?.type);
  const operation = (
    api?.definition as
      | {
          webhooks?: Record<
            string,
            {
              post: {
                parameters: Array<{ name: string; in: string; required?: boolean }>;
                requestBody: { content: { 'application/json': { schema: object } } };
              };
            }
          >;
        }
      | undefined
  )?.webhooks?.[type]?.post;
  if (api && envelope && !operation) problems.push(`no webhooks entry describes the event type ${type}`);
  if (envelope && operation) {
    let validate = webhookValidators.get(type);
    if (!validate) {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats.default(ajv);
      validate = ajv.compile(operation.requestBody.content['application/json'].schema);
      webhookValidators.set(type, validate);
    }
    if (!validate(envelope)) {
      for (const error of validate.errors ?? []) {
        problems.push(`body${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
      }
    }
    for (const parameter of operation.parameters) {
      if (
        parameter.in === 'header' &&
        parameter.required &&
        headers[parameter.name.toLowerCase()] === undefined
      ) {
        problems.push(`the required header ${parameter.name} is missing`);
      }
    }
  }
  if (problems.length > 0) record({ request: `webhook ${type}`, status: 0, problems });
  return problems;
}

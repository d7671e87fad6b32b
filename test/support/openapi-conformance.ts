import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import OpenAPIBackend, { type Operation } from 'openapi-backend';

/**
 * Checks every answer the integration suite gets from the API against the OpenAPI document the
 * same app serves (/v1/openapi.json): the operation must list the status; the body must match
 * that status's schema (openapi-backend, with a JSON Schema 2020-12 validator, as OpenAPI 3.1
 * says), error codes included; the headers it documents must have their documented form, and
 * those it marks required must be there; a 204 has no body. test/setup/openapi-conformance.ts
 * puts it around `fetch`, for the apps test/support/app.ts starts, and fails the test that
 * received an answer the document does not describe.
 */

interface Violation {
  request: string;
  status: number;
  problems: string[];
}

const watchedOrigins = new Set<string>();
/** The fetch the checks themselves use (never the checking one). */
let uncheckedFetch: typeof fetch = globalThis.fetch;
const documents = new Map<string, Promise<OpenAPIBackend>>();
const violations: Violation[] = [];

/** Have answers from this app (its base URL) checked against its document. */
export function watchApiOrigin(baseUrl: string): void {
  watchedOrigins.add(new URL(baseUrl).origin);
}

/** The violations found since the last call. */
export function takeConformanceViolations(): Violation[] {
  return violations.splice(0);
}

function loadDocument(origin: string, realFetch: typeof fetch): Promise<OpenAPIBackend> {
  let loaded = documents.get(origin);
  if (!loaded) {
    loaded = (async () => {
      const definition = await (await realFetch(`${origin}/v1/openapi.json`)).json();
      const api = new OpenAPIBackend({
        definition,
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
    documents.set(origin, loaded);
  }
  return loaded;
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
  } else if (!contentType.startsWith('application/json')) {
    problems.push(`content type ${contentType}, not application/json`);
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

/** `fetch`, with every answer from a watched app's /v1 checked against the app's document. */
export function conformanceCheckingFetch(realFetch: typeof fetch): typeof fetch {
  uncheckedFetch = realFetch;
  return async (input, init) => {
    const response = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (
      !watchedOrigins.has(url.origin) ||
      !url.pathname.startsWith('/v1/') ||
      url.pathname === '/v1/openapi.json'
    ) {
      return response;
    }
    try {
      const api = await loadDocument(url.origin, realFetch);
      const problems = await check(api, method, url, response.clone());
      if (problems.length > 0) {
        violations.push({
          request: `${method} ${url.pathname}${url.search}`,
          status: response.status,
          problems,
        });
      }
    } catch (error) {
      // The client went away (a test that aborts its request) or the app stopped: nothing to check.
      if (
        !(
          error instanceof Error &&
          /abort|terminated|ECONNREFUSED|other side closed/i.test(
            `${error.name} ${error.message} ${String(error.cause)}`,
          )
        )
      ) {
        throw error;
      }
    }
    return response;
  };
}

const webhookValidators = new Map<string, ReturnType<Ajv2020['compile']>>();

/**
 * Checks a request a test's webhook receiver got against the `webhooks` section of a watched
 * app's document: the event type has an entry, the body matches its envelope schema, and the
 * headers it lists as required are there. Problems fail the running test like any answer's.
 */
export async function checkWebhookDelivery(headers: Record<string, unknown>, body: string): Promise<void> {
  const origin = [...watchedOrigins][0];
  if (!origin) return;
  let api: OpenAPIBackend;
  try {
    api = await loadDocument(origin, uncheckedFetch);
  } catch {
    // The app stopped before its document was read: a late delivery of a finished test.
    documents.delete(origin);
    return;
  }
  const problems: string[] = [];
  let envelope: { type?: string } | null = null;
  try {
    envelope = JSON.parse(body) as { type?: string };
  } catch {
    problems.push('the body is not JSON');
  }
  const type = String(envelope?.type);
  const operation = (
    api.definition as {
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
  ).webhooks?.[type]?.post;
  if (envelope && !operation) problems.push(`no webhooks entry describes the event type ${type}`);
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
  if (problems.length > 0) violations.push({ request: `webhook ${type}`, status: 0, problems });
}

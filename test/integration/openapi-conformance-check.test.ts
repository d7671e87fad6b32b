/**
 * The contract check itself (test/support/openapi-conformance.ts): what it must catch, shown on a
 * small app whose answers break its own document. Each test takes the violations it provoked, so
 * the check that runs after every test (test/setup/openapi-conformance.ts) finds none left.
 */
import { spawn } from 'node:child_process';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkWebhookDelivery,
  conformanceForChild,
  expectServerErrors,
  takeConformanceViolations,
  watchApp,
} from '@/test/support/openapi-conformance';

const document = {
  openapi: '3.1.0',
  info: { title: 'A broken app', version: '1' },
  paths: {
    '/v1/ping/': {
      get: {
        operationId: 'ping',
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { ok: { const: true } },
                  required: ['ok'],
                  additionalProperties: false,
                },
              },
            },
          },
        },
      },
    },
  },
  webhooks: {
    'case.created': {
      post: {
        parameters: [{ name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } }],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { type: { const: 'case.created' } },
                required: ['type'],
                additionalProperties: false,
              },
            },
          },
        },
        responses: { '200': { description: 'received' } },
      },
    },
  },
};

let server: http.Server;
let port: number;
/** What /v1/ping/ answers: the document says `{"ok": true}`. */
let pingBody = '{"ok":false}';

beforeAll(async () => {
  server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: string) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    if (path === '/v1/openapi.json') return json(200, JSON.stringify(document));
    if (path === '/v1/ping/' || path === '/v1/ping') return json(200, pingBody);
    if (path === '/elsewhere') return json(503, '{"code":"SERVICE_UNAVAILABLE"}');
    return json(404, '{"code":"NOT_FOUND"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // Watched under one name; reached below under another.
  watchApp(`http://localhost:${port}`);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function problemsOf(violations: ReturnType<typeof takeConformanceViolations>): string[] {
  return violations.map((v) => `${v.request}: ${v.problems.join('; ')}`);
}

describe('the contract check', () => {
  it('checks an app by its port, whatever host name reaches it, with or without the trailing slash', async () => {
    await fetch(`http://127.0.0.1:${port}/v1/ping/`);
    await fetch(`http://127.0.0.1:${port}/v1/ping`);
    const found = problemsOf(takeConformanceViolations());
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^GET \/v1\/ping\/: body\/ok must be equal to constant/);
    expect(found[1]).toMatch(/^GET \/v1\/ping: body\/ok must be equal to constant/);
    // The control: a conforming answer is not reported.
    pingBody = '{"ok":true}';
    try {
      await fetch(`http://127.0.0.1:${port}/v1/ping/`);
      expect(takeConformanceViolations()).toEqual([]);
    } finally {
      pingBody = '{"ok":false}';
    }
  });

  it('checks answers read through node:http', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/v1/ping/`, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
    await expect.poll(() => problemsOf(takeConformanceViolations()).join('\n')).toMatch(/GET \/v1\/ping\//);
  });

  it('fails a server error on any path unless the test expects one', async () => {
    await fetch(`http://127.0.0.1:${port}/elsewhere`);
    expect(problemsOf(takeConformanceViolations())).toEqual([
      'GET /elsewhere: answered 503 (the test did not declare it expects one): {"code":"SERVICE_UNAVAILABLE"}',
    ]);
    expectServerErrors();
    await fetch(`http://127.0.0.1:${port}/elsewhere`);
    expect(takeConformanceViolations()).toEqual([]);
  });

  it("checks a child process's calls and reports them to its parent", async () => {
    const child = spawn(
      process.execPath,
      ['-e', `fetch('http://127.0.0.1:${port}/v1/ping/').then((r) => r.text())`],
      { env: { ...process.env, ...conformanceForChild() }, stdio: 'inherit' },
    );
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(problemsOf(takeConformanceViolations())).toEqual([
      expect.stringMatching(/^GET \/v1\/ping\/: body\/ok must be equal to constant/),
    ]);
  });

  it("checks a webhook's body and required headers against the document's webhooks", async () => {
    expect(await checkWebhookDelivery({ 'webhook-id': 'msg_1' }, '{"type":"case.created"}')).toEqual([]);
    const problems = await checkWebhookDelivery({}, '{"type":"case.created","extra":1}');
    expect(problems).toEqual([
      'body must NOT have additional properties {"additionalProperty":"extra"}',
      'the required header webhook-id is missing',
    ]);
    expect(await checkWebhookDelivery({ 'webhook-id': 'msg_2' }, '{"type":"case.mystery"}')).toEqual([
      'no webhooks entry describes the event type case.mystery',
    ]);
    expect(takeConformanceViolations()).toHaveLength(2);
  });
});

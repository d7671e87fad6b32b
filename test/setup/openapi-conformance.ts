import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, afterEach, expect } from 'vitest';
import { takeUncheckedStatuses } from '../support/api-client';
import {
  checkNodeHttpAnswer,
  conformanceCheckingFetch,
  forgetWatchedApps,
  takeConformanceViolations,
} from '../support/openapi-conformance';

// Every integration test file: the apps' answers are checked (see test/support/openapi-conformance.ts),
// whether read through `fetch` or `node:http`, and a test that got one the document does not
// describe, or a server error it did not expect, fails.
// The integration files share their worker's modules (vitest's isolate: false), and this file runs
// before each of them: the fetch and node:http it patches stay patched for the worker's life, so
// they are patched once, and only the hooks below are registered per file.
const patched = Symbol.for('vouch.test.conformance-patched');
const marks = globalThis as typeof globalThis & { [patched]?: true };
if (!marks[patched]) {
  marks[patched] = true;
  patchAnswerChecks();
}

function patchAnswerChecks(): void {
  globalThis.fetch = conformanceCheckingFetch(globalThis.fetch);

  const originalRequest = http.request;
  /** `node:http`'s request, with each answer checked once its body has arrived. */
  function checkedRequest(...args: Parameters<typeof http.request>): http.ClientRequest {
    const req = originalRequest(...args);
    req.prependListener('response', (res) => {
      // Beside the test's own reading, and never in its way: an answer that cannot be checked (a
      // URL this cannot rebuild) is skipped, and text chunks (setEncoding) are taken too.
      let url: URL;
      try {
        url = new URL(req.path, `${req.protocol}//${req.host}:${res.socket?.remotePort ?? ''}`);
      } catch {
        return;
      }
      // The body is taken as the test reads it (its 'data' and 'end' events), so the check neither
      // starts the stream flowing nor takes a chunk a late reader would miss.
      const chunks: Buffer[] = [];
      const emit = res.emit.bind(res);
      res.emit = ((event: string | symbol, ...args: unknown[]) => {
        if (event === 'data') chunks.push(Buffer.from(args[0] as Buffer | string));
        if (event === 'end') {
          const headers = Object.fromEntries(
            Object.entries(res.headers).map(([name, value]) => [
              name,
              Array.isArray(value) ? value.join(', ') : String(value),
            ]),
          );
          void checkNodeHttpAnswer(req.method, url, res.statusCode ?? 0, headers, Buffer.concat(chunks));
        }
        return emit(event, ...args);
      }) as typeof res.emit;
    });
    return req;
  }
  http.request = checkedRequest as typeof http.request;
  http.get = ((...args: Parameters<typeof http.get>) => {
    const req = checkedRequest(...(args as Parameters<typeof http.request>));
    req.end();
    return req;
  }) as typeof http.get;
  // Tests import `request` and `get` by name: their bindings follow the patched module from here on.
  syncBuiltinESMExports();
}

function expectConformingAnswers(): void {
  expect(takeConformanceViolations(), 'answers the document does not describe, or server errors').toEqual([]);
  expect(
    takeUncheckedStatuses(),
    'API calls that failed while the test read no status (read it, or expect it, e.g. expectError)',
  ).toEqual([]);
}

forgetWatchedApps();
afterEach(expectConformingAnswers);
// Answers to requests a test left running arrive after it ended.
afterAll(expectConformingAnswers);

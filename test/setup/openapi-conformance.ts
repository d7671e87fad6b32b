import { afterAll, afterEach, expect } from 'vitest';
import { conformanceCheckingFetch, takeConformanceViolations } from '../support/openapi-conformance';

// Every integration test file: the API's answers are checked against its OpenAPI document, and a
// test that got one the document does not describe fails (see test/support/openapi-conformance.ts).
globalThis.fetch = conformanceCheckingFetch(globalThis.fetch);

function expectConformingAnswers(): void {
  expect(takeConformanceViolations(), 'answers that /v1/openapi.json does not describe').toEqual([]);
}

afterEach(expectConformingAnswers);
// Answers to requests a test left running arrive after it ended.
afterAll(expectConformingAnswers);

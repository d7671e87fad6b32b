import { expect } from 'vitest';
import type { ApiResponse } from './api-client';

/**
 * Asserts the contract of every error answer: the status, a JSON body with exactly
 * `{error, detail, code}`, `error` being the lower-case code, and nothing that looks like a
 * stack trace.
 */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { code } });
  expectErrorShape(res);
}

/** The three-field error shape on any 4xx/5xx, whatever the code. */
export function expectErrorShape(res: ApiResponse): void {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = res.body as Record<string, unknown>;
  expect(body).toBeTypeOf('object');
  expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'error']);
  expect(body.code).toMatch(/^[A-Z_]+$/);
  expect(body.error).toBe(String(body.code).toLowerCase());
  expect(body.detail).toBeTypeOf('string');
  expect(res.text).not.toMatch(/\bat .+\.(js|ts):\d+|node_modules|Error:/);
}

/**
 * A small REST client for the tests: raw `fetch`, so status codes and headers stay visible.
 *
 * Every call's status is held to account: a test that reads `status` (an assertion, `expectError`)
 * states what it expects; a call whose status no one reads is expected to succeed, and one that
 * answered anything but 2xx fails the test (test/setup/openapi-conformance.ts), so a call made for
 * its side effect cannot fail unseen.
 */
export interface ApiResponse<T = unknown> {
  readonly status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Calls whose status has not been read yet, with where they were made. */
const unchecked = new Map<ApiResponse, string>();

/** The unread calls that did not succeed, described, since the last call. */
export function takeUncheckedStatuses(): string[] {
  const failed = [...unchecked].flatMap(([res, request]) => {
    const status = (res as unknown as { [RAW_STATUS]: number })[RAW_STATUS];
    return status >= 200 && status < 300 ? [] : [`${request} answered ${status}: ${res.text.slice(0, 200)}`];
  });
  unchecked.clear();
  return failed;
}

const RAW_STATUS = Symbol('status');

function trackedResponse<T>(request: string, status: number, fields: Omit<ApiResponse<T>, 'status'>) {
  const res = {
    ...fields,
    [RAW_STATUS]: status,
    get status() {
      unchecked.delete(res);
      return status;
    },
  } as ApiResponse<T>;
  unchecked.set(res, request);
  return res;
}

export function apiClient(baseUrl: string, apiKey?: string) {
  async function request<T = unknown>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (apiKey && !('Authorization' in headers)) headers.Authorization = `Bearer ${apiKey}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(path.startsWith('http') ? path : `${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return trackedResponse<T>(`${method} ${path}`, res.status, {
      headers: res.headers,
      body: parsed as T,
      text,
    });
  }
  return {
    request,
    get: <T = unknown>(path: string, headers?: Record<string, string>) =>
      request<T>('GET', path, { headers }),
    post: <T = unknown>(path: string, body?: unknown, headers?: Record<string, string>) =>
      request<T>('POST', path, { body, headers }),
    patch: <T = unknown>(path: string, body?: unknown, headers?: Record<string, string>) =>
      request<T>('PATCH', path, { body, headers }),
    delete: <T = unknown>(path: string, headers?: Record<string, string>) =>
      request<T>('DELETE', path, { headers }),
  };
}

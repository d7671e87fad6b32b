/** A small REST client for the tests: raw `fetch`, so status codes and headers stay visible. */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
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
    return { status: res.status, headers: res.headers, body: parsed as T, text };
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

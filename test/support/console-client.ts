import { spawn } from 'node:child_process';

/**
 * Drives the console's server side the way a browser does: better-auth under /api/auth with the
 * page's Origin, tRPC at /api/trpc with the session cookie. Raw fetch keeps statuses visible.
 */
export interface TrpcAnswer<T = unknown> {
  status: number;
  headers: Headers;
  data?: T;
  error?: { message: string; data?: { appCode?: string; httpStatus?: number } };
}

/**
 * `forwardedFor`: the address a trusted proxy would report for this client (X-Forwarded-For on
 * every request), for an app started with TRUSTED_PROXIES=127.0.0.1, so that clients in one test
 * file do not share the per-address sign-in limit as they would all being 127.0.0.1.
 */
export function consoleClient(baseUrl: string, options: { forwardedFor?: string } = {}) {
  let cookies: Record<string, string> = {};
  const forwarded: Record<string, string> = options.forwardedFor
    ? { 'X-Forwarded-For': options.forwardedFor }
    : {};

  function keepCookies(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (!name) continue;
      const joined = value.join('=');
      if (joined === '' || /max-age=0/i.test(line)) delete cookies[name.trim()];
      else cookies[name.trim()] = joined;
    }
  }

  const cookieHeader = () =>
    Object.entries(cookies)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');

  async function auth(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(`${baseUrl}/api/auth${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: baseUrl,
        Cookie: cookieHeader(),
        ...forwarded,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    keepCookies(response);
    return response;
  }

  async function answer<T>(response: Response): Promise<TrpcAnswer<T>> {
    keepCookies(response);
    const payload = (await response.json()) as { result?: { data: T }; error?: TrpcAnswer['error'] };
    return {
      status: response.status,
      headers: response.headers,
      data: payload.result?.data,
      error: payload.error,
    };
  }

  return {
    cookies: () => ({ ...cookies }),
    setCookie: (name: string, value: string) => {
      cookies[name] = value;
    },
    clearCookies: () => {
      cookies = {};
    },
    signIn: (email: string, password: string, headers?: Record<string, string>) =>
      auth('/sign-in/email', { email, password }, headers),
    requestSignInLink: (email: string, headers?: Record<string, string>) =>
      auth('/sign-in/magic-link', { email, callbackURL: '/console' }, headers),
    signOut: () => auth('/sign-out', {}),
    /** Follows an e-mailed sign-in link like a browser would, keeping the session cookie it sets. */
    async openLink(url: string): Promise<Response> {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { Cookie: cookieHeader(), ...forwarded },
      });
      keepCookies(response);
      return response;
    },
    async query<T = unknown>(path: string, input?: unknown): Promise<TrpcAnswer<T>> {
      const search = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
      return answer<T>(
        await fetch(`${baseUrl}/api/trpc/${path}${search}`, {
          headers: { Cookie: cookieHeader(), ...forwarded },
        }),
      );
    },
    async mutate<T = unknown>(
      path: string,
      input?: unknown,
      headers: Record<string, string> = {},
    ): Promise<TrpcAnswer<T>> {
      return answer<T>(
        await fetch(`${baseUrl}/api/trpc/${path}`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Origin: baseUrl,
            Cookie: cookieHeader(),
            ...forwarded,
            ...headers,
          },
          body: JSON.stringify(input ?? {}),
        }),
      );
    },
  };
}

export type ConsoleClient = ReturnType<typeof consoleClient>;

/**
 * Signs `client` in as `email` with the one-time password the CLI (or createTeam) gave, and
 * replaces it at once with `newPassword`, as the console asks before anything else: where most
 * console tests start. Throws (failing the test, or the benchmark) if either step is refused; plain
 * errors, so scripts outside vitest use it too.
 */
export async function signInReplacingPassword(
  client: ConsoleClient,
  email: string,
  oneTimePassword: string | null | undefined,
  newPassword: string,
): Promise<ConsoleClient> {
  const signedIn = await client.signIn(email, oneTimePassword ?? '');
  if (signedIn.status !== 200) throw new Error(`sign-in of ${email} answered ${signedIn.status}`);
  const changed = await client.mutate('console.session.changePassword', {
    current_password: oneTimePassword,
    new_password: newPassword,
  });
  if (changed.status !== 200) throw new Error(`password change of ${email} answered ${changed.status}`);
  return client;
}

/** The operator CLI's whole run: exit code, stdout and stderr. */
export async function runCliProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  // vitest sets BASE_URL to "/" in its workers; an operator's shell does not.
  const { BASE_URL: _vitestBaseUrl, ...inherited } = process.env;
  const child = spawn(process.execPath, ['scripts/run-cli.mjs', 'index', ...args], {
    env: { ...inherited, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  child.stderr.on('data', (c) => {
    err += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, out, err };
}

/** Runs the operator CLI against a database and returns its JSON answer (the last stdout line). */
export async function runCli(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  const { code, out, err } = await runCliProcess(args, env);
  if (code !== 0) throw new Error(`cli ${args.join(' ')} exited ${code}: ${err}`);
  const last = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Record<string, unknown>;
}

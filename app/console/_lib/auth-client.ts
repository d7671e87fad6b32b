'use client';

/**
 * The few better-auth endpoints the console uses, called with plain fetch (its client library
 * would add weight for nothing). Returns an error sentence, or null on success.
 */
async function post(path: string, body: unknown): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch(`/api/auth${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    return 'The server could not be reached. Check your connection and try again.';
  }
  if (response.ok) return null;
  if (response.status === 429) {
    const wait = response.headers.get('x-retry-after');
    return `Too many attempts. Wait ${wait ?? 'a minute'} seconds and try again.`;
  }
  const payload = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
  if (response.status === 401 && payload?.code !== 'ONE_TIME_PASSWORD_EXPIRED') {
    return 'That e-mail and password do not match an account.';
  }
  return payload?.message ?? 'Signing in failed. Please try again.';
}

export const signInWithPassword = (email: string, password: string) =>
  post('/sign-in/email', { email, password, rememberMe: true });

/** `callbackPath`: the console page the link leads to once it has signed the person in. */
export const sendSignInLink = (email: string, callbackPath = '/console') =>
  post('/sign-in/magic-link', { email, callbackURL: callbackPath, errorCallbackURL: '/console/sign-in' });

export const signOut = () => post('/sign-out', {});

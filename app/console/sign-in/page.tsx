'use client';

import { type FormEvent, useEffect, useState } from 'react';
import { sendSignInLink, signInWithPassword } from '@/app/console/_lib/auth-client';

const LINK_ERRORS: Record<string, string> = {
  INVALID_TOKEN: 'That sign-in link is not valid. Ask for a new one below.',
  EXPIRED_TOKEN: 'That sign-in link has expired. Ask for a new one below.',
  new_user_signup_disabled: 'There is no console account for that e-mail. Ask a team admin to invite you.',
};

/**
 * The console page to return to after signing in (`?next=`, e.g. an invitation's page): only a
 * path of this console, so the sign-in page cannot be made to send anyone elsewhere.
 */
function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get('next') ?? '';
  const url = new URL(next || '/console', window.location.origin);
  return url.origin === window.location.origin && url.pathname.startsWith('/console/')
    ? `${url.pathname}${url.search}`
    : '/console';
}

export default function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const code = new URLSearchParams(window.location.search).get('error');
    if (code) setError(LINK_ERRORS[code] ?? 'That sign-in link did not work. Ask for a new one below.');
  }, []);

  async function onPassword(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setNotice(null);
    const problem = await signInWithPassword(email, password);
    setBusy(false);
    if (problem) setError(problem);
    else window.location.assign(nextPath());
  }

  async function onLink() {
    setError(null);
    if (!email) {
      setError('Enter your e-mail address first.');
      return;
    }
    setBusy(true);
    const problem = await sendSignInLink(email, nextPath());
    setBusy(false);
    if (problem) setError(problem);
    else
      setNotice(
        `If ${email} has a console account, a sign-in link is on its way. It works once, for 15 minutes.`,
      );
  }

  return (
    <main className="c-narrow">
      <h1>Sign in to the Vouch console</h1>
      <form onSubmit={onPassword} className="c-form" aria-describedby={error ? 'sign-in-error' : undefined}>
        <label htmlFor="email">E-mail</label>
        <input
          id="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {error ? (
          <p id="sign-in-error" className="c-error" role="alert">
            {error}
          </p>
        ) : null}
        {notice ? (
          <p className="c-notice" role="status">
            {notice}
          </p>
        ) : null}
        <div className="c-row">
          <button type="submit" className="c-button" disabled={busy || !password}>
            Sign in
          </button>
          <button type="button" className="c-button c-secondary" disabled={busy} onClick={onLink}>
            E-mail me a sign-in link
          </button>
        </div>
      </form>
    </main>
  );
}

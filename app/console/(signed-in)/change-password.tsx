'use client';

import { type FormEvent, useState } from 'react';
import { api } from '@/app/console/_lib/trpc';
import { ErrorNote } from '@/app/console/_lib/ui';

export function ChangePassword({
  required,
  hasPassword = true,
  onChanged,
}: {
  required?: boolean;
  hasPassword?: boolean;
  onChanged: () => void;
}) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  // Right after signing in with a one-time password, that sign-in proved it: it is not asked again.
  const asksCurrent = hasPassword && !required;

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (next !== confirm) {
      setError(new Error('The two new passwords are not the same.'));
      return;
    }
    setBusy(true);
    try {
      await api.session.changePassword.mutate({
        current_password: asksCurrent ? current : undefined,
        new_password: next,
      });
      setError(undefined);
      setDone(true);
      setCurrent('');
      setNext('');
      setConfirm('');
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="password-heading">
      <h1 id="password-heading">{required ? 'Choose your own password' : 'Change your password'}</h1>
      {required ? (
        <p>
          You signed in with a one-time password. Choose a password of your own (at least 12 characters) to
          continue.
        </p>
      ) : null}
      <form onSubmit={onSubmit} className="c-form">
        {asksCurrent ? (
          <>
            <label htmlFor="current-password">Current password</label>
            <input
              id="current-password"
              type="password"
              autoComplete="current-password"
              required
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
            />
          </>
        ) : null}
        <label htmlFor="new-password">New password</label>
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          required
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
        <label htmlFor="confirm-password">New password again</label>
        <input
          id="confirm-password"
          type="password"
          autoComplete="new-password"
          required
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
        />
        <ErrorNote error={error} />
        {done && !required ? (
          <p className="c-notice" role="status">
            Your password has been changed.
          </p>
        ) : null}
        <div className="c-row">
          <button type="submit" className="c-button" disabled={busy}>
            Save password
          </button>
        </div>
      </form>
    </section>
  );
}

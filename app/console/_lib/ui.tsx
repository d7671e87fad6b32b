'use client';

import { type ReactNode, useState } from 'react';
import { describeError, errorRequestId } from './trpc';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const requestId = errorRequestId(error);
  return (
    <p className="c-error" role="alert">
      {describeError(error)}
      {requestId ? <span className="c-small c-request-id"> (Request id: {requestId})</span> : null}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="c-muted" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="c-empty">{children}</p>;
}

/** Copies `value` and says so for screen readers too. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="c-button c-secondary"
      onClick={async () => {
        await navigator.clipboard.writeText(value);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? 'Copied' : label}
      <span className="c-sr" aria-live="polite">
        {copied ? ' — copied to the clipboard' : ''}
      </span>
    </button>
  );
}

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  return (
    new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) +
    ' UTC'
  );
}

/** To the second: for a case's timeline and deliveries, where several things happen in a minute. */
export function formatInstant(iso: string | null): string {
  if (!iso) return '—';
  return (
    new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }) +
    ' UTC'
  );
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

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

/**
 * Copies `value`. The button keeps its name; what happened is said once, beside it, in a live
 * region that screen readers read out.
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <span className="c-copy">
      <button
        type="button"
        className="c-button c-secondary"
        onClick={async () => {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 4000);
        }}
      >
        {label}
      </button>
      <span role="status">{copied ? 'Copied to the clipboard' : ''}</span>
    </span>
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

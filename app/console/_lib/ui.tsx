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

/*
 * The console speaks English, but its dates and numbers follow the browser's locale (undefined:
 * the browser's own), in UTC, as the API and the audit log state times. The console renders its
 * data after it has loaded in the browser, so the server never formats these.
 */

/**
 * A case's or template's name_match, as a choice: a document showing another name than expected is
 * recorded and the case may close (`record`), instead of failing it (`enforce`, unticked).
 */
export function RecordNameMismatch({
  checked,
  onChange,
  expected,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  /** Whose name the document is compared with, as the sentence says it. */
  expected: string;
}) {
  return (
    <label className="c-check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> If the ID
      document shows another name than {expected}, let the case close and record the difference (otherwise the
      case fails)
    </label>
  );
}

/** The offer of a passkey once the case closes (a later case can then ask for the passkey alone). */
export function OfferPasskey({
  checked,
  onChange,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label className="c-check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> Once the case
      closes, offer the person to save a passkey, so that a later case can verify them by it alone
    </label>
  );
}

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  const at = new Date(iso).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  });
  return `${at} UTC`;
}

/** To the second (its style names the zone): for a case's timeline and deliveries. */
export function formatInstant(iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'long',
    timeZone: 'UTC',
  });
}

/** Prices are kept in US cents. */
export function formatCents(cents: number): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' }).format(cents / 100);
}

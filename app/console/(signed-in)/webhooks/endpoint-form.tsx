'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote } from '@/app/console/_lib/ui';

export interface EndpointFields {
  url: string;
  events: string[];
  description: string;
}

/** URL, events as checkboxes, description: validated by the same domain rules as the API. */
export function EndpointForm({
  initial,
  submitLabel,
  onSubmit,
}: {
  initial: EndpointFields;
  submitLabel: string;
  onSubmit: (fields: EndpointFields) => Promise<void>;
}) {
  const queries = useQueryApi();
  const types = useQuery(queries.webhooks.eventTypes.queryOptions());
  const [url, setUrl] = useState(initial.url);
  const [events, setEvents] = useState<string[]>(initial.events);
  const [description, setDescription] = useState(initial.description);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      await onSubmit({ url, events, description });
      setError(undefined);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="c-form">
      <label htmlFor="endpoint-url">URL (HTTPS)</label>
      <input
        id="endpoint-url"
        type="url"
        required
        placeholder="https://example.com/webhooks/vouch"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
      />
      <fieldset className="c-fieldset">
        <legend>Events</legend>
        {types.data?.map((type) => (
          <label key={type} className="c-check">
            <input
              type="checkbox"
              checked={events.includes(type)}
              onChange={(e) =>
                setEvents(e.target.checked ? [...events, type] : events.filter((t) => t !== type))
              }
            />{' '}
            <code>{type}</code>
          </label>
        ))}
        <ErrorNote error={types.error} />
      </fieldset>
      <label htmlFor="endpoint-description">Description (optional)</label>
      <input
        id="endpoint-description"
        maxLength={500}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
      <ErrorNote error={error} />
      <div className="c-row">
        <button type="submit" className="c-button" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}

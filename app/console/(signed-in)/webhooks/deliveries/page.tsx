'use client';

import { keepPreviousData, skipToken, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { type FormEvent, useEffect, useState } from 'react';
import { useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Status = 'pending' | 'success' | 'failed' | 'dead_letter';

interface Filters {
  endpoint_id?: string;
  status?: Status;
  event_type?: string;
  cursor?: string;
}

export default function DeliveriesPage() {
  const [filters, setFilters] = useState<Filters | null>(null);
  const [endpointId, setEndpointId] = useState('');
  const [status, setStatus] = useState('');
  const [eventType, setEventType] = useState('');
  const queries = useQueryApi();
  const endpoints = useQuery(queries.webhooks.list.queryOptions());
  const types = useQuery(queries.webhooks.eventTypes.queryOptions());
  // Nothing is read until the filters from the link are known.
  const page = useQuery({
    ...queries.webhooks.deliveries.queryOptions(filters ?? skipToken),
    placeholderData: keepPreviousData,
  });

  // A link from an endpoint's page arrives with ?endpoint_id=…
  useEffect(() => {
    const fromLink = new URLSearchParams(window.location.search).get('endpoint_id') ?? '';
    setEndpointId(fromLink);
    setFilters(fromLink ? { endpoint_id: fromLink } : {});
  }, []);

  function onFilter(event: FormEvent) {
    event.preventDefault();
    setFilters({
      endpoint_id: endpointId || undefined,
      status: (status || undefined) as Status | undefined,
      event_type: eventType || undefined,
    });
  }

  const urlOf = (id: string) => endpoints.data?.find((e) => e.id === id)?.url ?? id;
  const data = page.data;

  return (
    <>
      <p>
        <Link href="/console/webhooks">← Endpoints</Link>
      </p>
      <h1>Delivery log</h1>
      <form onSubmit={onFilter} className="c-form c-filters" aria-label="Filter deliveries">
        <div>
          <label htmlFor="d-endpoint">Endpoint</label>
          <select id="d-endpoint" value={endpointId} onChange={(e) => setEndpointId(e.target.value)}>
            <option value="">Any</option>
            {endpoints.data?.map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="d-status">Status</label>
          <select id="d-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any</option>
            <option value="pending">Pending</option>
            <option value="success">Success</option>
            <option value="failed">Failed (will retry)</option>
            <option value="dead_letter">Dead letter (gave up)</option>
          </select>
        </div>
        <div>
          <label htmlFor="d-type">Event type</label>
          <select id="d-type" value={eventType} onChange={(e) => setEventType(e.target.value)}>
            <option value="">Any</option>
            {[...(types.data ?? []), 'ping'].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div className="c-row">
          <button type="submit" className="c-button">
            Filter
          </button>
          <button
            type="button"
            className="c-button c-secondary"
            onClick={() => setFilters(filters ? { ...filters } : {})}
          >
            Refresh
          </button>
        </div>
      </form>
      {page.isFetching ? <Loading what="deliveries" /> : null}
      <ErrorNote error={page.error} />
      {data && data.results.length === 0 ? <Empty>No deliveries match.</Empty> : null}
      {data && data.results.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Webhook deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.results.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link href={`/console/webhooks/deliveries/${d.id}`}>{d.event_type}</Link>
                  </td>
                  <td>
                    <span className={`c-status c-status-${d.status}`}>{d.status}</span>
                    {d.last_response_status ? ` (HTTP ${d.last_response_status})` : ''}
                  </td>
                  <td>{d.attempt_count}</td>
                  <td className="c-small">{urlOf(d.endpoint_id)}</td>
                  <td>{formatDate(d.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {data && filters ? (
        <nav aria-label="Pages of deliveries" className="c-row">
          <button
            type="button"
            className="c-button c-secondary"
            disabled={!data.previous_cursor}
            onClick={() => data.previous_cursor && setFilters({ ...filters, cursor: data.previous_cursor })}
          >
            Newer
          </button>
          <button
            type="button"
            className="c-button c-secondary"
            disabled={!data.next_cursor}
            onClick={() => data.next_cursor && setFilters({ ...filters, cursor: data.next_cursor })}
          >
            Older
          </button>
        </nav>
      ) : null}
    </>
  );
}

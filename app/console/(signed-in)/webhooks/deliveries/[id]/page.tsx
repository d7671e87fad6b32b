'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

export default function DeliveryPage() {
  const { id } = useParams<{ id: string }>();
  const { canManage } = useSession();
  const queries = useQueryApi();
  const delivery = useQuery(queries.webhooks.delivery.queryOptions({ id }));
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | null>(null);
  const data = delivery.data;

  return (
    <>
      <p>
        <Link href="/console/webhooks/deliveries">← Delivery log</Link>
      </p>
      {delivery.isPending ? <Loading what="the delivery" /> : null}
      <ErrorNote error={delivery.error} />
      {data ? (
        <>
          <h1>
            Delivery of <code>{data.event_type}</code>
          </h1>
          <dl className="c-facts">
            <div>
              <dt>Status</dt>
              <dd>
                <span className={`c-status c-status-${data.status}`}>{data.status}</span>
              </dd>
            </div>
            <div>
              <dt>Delivery id (X-Service-Delivery)</dt>
              <dd>
                <code>{data.id}</code>
              </dd>
            </div>
            <div>
              <dt>Next attempt</dt>
              <dd>{formatDate(data.next_attempt_at)}</dd>
            </div>
          </dl>
          <ErrorNote error={error} />
          {notice ? (
            <p className="c-notice" role="status">
              {notice}
            </p>
          ) : null}
          <div className="c-row">
            <button type="button" className="c-button c-secondary" onClick={() => delivery.refetch()}>
              Refresh
            </button>
            {canManage && (data.status === 'failed' || data.status === 'dead_letter') ? (
              <button
                type="button"
                className="c-button"
                onClick={async () => {
                  try {
                    await api.webhooks.retry.mutate({ id });
                    setError(undefined);
                    setNotice('Queued for another attempt.');
                    delivery.refetch();
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Retry now
              </button>
            ) : null}
          </div>
          <h2>Payload</h2>
          <p className="c-small">
            {canManage
              ? 'The exact body each attempt sent and signed.'
              : "The body each attempt sent, without the case's public id (owners and admins see it whole)."}
          </p>
          {data.payload !== null ? (
            <pre className="c-payload" data-testid="delivery-payload">
              {data.payload}
            </pre>
          ) : null}
          <h2>Attempts</h2>
          {data.attempts.length === 0 ? <Empty>No attempt yet.</Empty> : null}
          {data.attempts.length > 0 ? (
            <div className="c-table-wrap">
              <table>
                <caption className="c-sr">Attempts</caption>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Started</th>
                    <th scope="col">Result</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Response</th>
                  </tr>
                </thead>
                <tbody>
                  {data.attempts.map((a) => (
                    <tr key={a.attempt_number}>
                      <td>{a.attempt_number}</td>
                      <td>{formatDate(a.started_at)}</td>
                      <td>{a.response_status ? `HTTP ${a.response_status}` : (a.error ?? '—')}</td>
                      <td>{a.duration_ms} ms</td>
                      <td>
                        {a.response_body ? (
                          <pre className="c-small">{a.response_body.slice(0, 500)}</pre>
                        ) : (
                          '—'
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </>
      ) : null}
    </>
  );
}

'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, Loading } from '@/app/console/_lib/ui';
import { EndpointForm } from './endpoint-form';
import { SecretBox } from './secret-box';

export default function WebhooksPage() {
  const { canManage } = useSession();
  const queries = useQueryApi();
  const endpoints = useQuery(queries.webhooks.list.queryOptions());
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);

  return (
    <>
      <h1>Webhooks</h1>
      <p className="c-row">
        <Link href="/console/webhooks/deliveries">Delivery log</Link>
      </p>
      {secret ? (
        <SecretBox
          secret={secret}
          title="Signing secret of the new endpoint"
          onDone={() => setSecret(null)}
        />
      ) : null}
      {canManage && !creating ? (
        <div className="c-row">
          <button type="button" className="c-button" onClick={() => setCreating(true)}>
            Add an endpoint
          </button>
        </div>
      ) : null}
      {!canManage ? <p className="c-notice">You have read-only access (viewer).</p> : null}
      {creating ? (
        <section aria-labelledby="new-endpoint">
          <h2 id="new-endpoint">New endpoint</h2>
          <EndpointForm
            initial={{ url: '', events: [], description: '' }}
            submitLabel="Create endpoint"
            onSubmit={async (fields) => {
              const created = await api.webhooks.create.mutate(fields);
              setSecret(created.secret);
              setCreating(false);
              endpoints.refetch();
            }}
          />
        </section>
      ) : null}
      {endpoints.isPending ? <Loading what="endpoints" /> : null}
      <ErrorNote error={endpoints.error} />
      {endpoints.data && endpoints.data.length === 0 ? <Empty>No webhook endpoints yet.</Empty> : null}
      {endpoints.data && endpoints.data.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Webhook endpoints</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">State</th>
                <th scope="col">Failures in a row</th>
                <th scope="col">Events</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.map((e) => (
                <tr key={e.id}>
                  <td>
                    <Link href={`/console/webhooks/${e.id}`}>{e.url}</Link>
                    {e.description ? <div className="c-muted c-small">{e.description}</div> : null}
                  </td>
                  <td>{e.is_active ? 'Active' : e.disabled_at ? 'Disabled after failures' : 'Disabled'}</td>
                  <td>{e.consecutive_failures}</td>
                  <td className="c-small">{e.events.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';
import { EndpointForm } from '@/app/console/(signed-in)/webhooks/endpoint-form';
import { SecretBox } from '@/app/console/(signed-in)/webhooks/secret-box';

export default function EndpointPage() {
  const { id } = useParams<{ id: string }>();
  const router = useRouter();
  const { canManage } = useSession();
  const queries = useQueryApi();
  const endpoint = useQuery(queries.webhooks.get.queryOptions({ id }));
  const [secret, setSecret] = useState<{ value: string; title: string } | null>(null);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [revealing, setRevealing] = useState(false);

  async function act(run: () => Promise<unknown>, message: string) {
    try {
      await run();
      setError(undefined);
      setNotice(message);
      endpoint.refetch();
    } catch (err) {
      setNotice(null);
      setError(err);
    }
  }

  async function onReveal(event: FormEvent) {
    event.preventDefault();
    try {
      const revealed = await api.webhooks.revealSecret.mutate({ id, password });
      setSecret({ value: revealed.secret, title: 'Current signing secret' });
      setPassword('');
      setRevealing(false);
      setError(undefined);
    } catch (err) {
      setError(err);
    }
  }

  const data = endpoint.data;
  return (
    <>
      <p>
        <Link href="/console/webhooks">← All endpoints</Link>
      </p>
      {endpoint.isPending ? <Loading what="the endpoint" /> : null}
      <ErrorNote error={endpoint.error} />
      {data ? (
        <>
          <h1>Endpoint</h1>
          <dl className="c-facts">
            <div>
              <dt>URL</dt>
              <dd>{data.url}</dd>
            </div>
            <div>
              <dt>State</dt>
              <dd>
                {data.is_active
                  ? 'Active'
                  : data.disabled_at
                    ? `Disabled ${formatDate(data.disabled_at)}`
                    : 'Disabled'}
              </dd>
            </div>
            <div>
              <dt>Failures in a row</dt>
              <dd>{data.consecutive_failures}</dd>
            </div>
          </dl>
          <p className="c-row">
            <Link href={`/console/webhooks/deliveries?endpoint_id=${data.id}`}>
              Deliveries to this endpoint
            </Link>
          </p>
          {secret ? (
            <SecretBox secret={secret.value} title={secret.title} onDone={() => setSecret(null)} />
          ) : null}
          <ErrorNote error={error} />
          {notice ? (
            <p className="c-notice" role="status">
              {notice}
            </p>
          ) : null}
          {canManage ? (
            <>
              <div className="c-row">
                <button
                  type="button"
                  className="c-button"
                  onClick={() =>
                    act(
                      () => api.webhooks.sendTest.mutate({ id }),
                      'A test ping was queued; see the delivery log.',
                    )
                  }
                >
                  Send test
                </button>
                <button
                  type="button"
                  className="c-button c-secondary"
                  onClick={() =>
                    act(
                      () => api.webhooks.update.mutate({ id, is_active: !data.is_active }),
                      data.is_active ? 'The endpoint is disabled.' : 'The endpoint is enabled.',
                    )
                  }
                >
                  {data.is_active ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  className="c-button c-secondary"
                  onClick={async () => {
                    if (!window.confirm('Rotate the signing secret? The current one stops working at once.'))
                      return;
                    try {
                      const rotated = await api.webhooks.rotateSecret.mutate({ id });
                      setSecret({ value: rotated.secret, title: 'New signing secret' });
                      setError(undefined);
                    } catch (err) {
                      setError(err);
                    }
                  }}
                >
                  Rotate secret
                </button>
                <button
                  type="button"
                  className="c-button c-secondary"
                  onClick={() => setRevealing(!revealing)}
                >
                  Reveal secret
                </button>
                <button
                  type="button"
                  className="c-button c-danger"
                  onClick={async () => {
                    if (!window.confirm('Delete this endpoint and its delivery log?')) return;
                    try {
                      await api.webhooks.delete.mutate({ id });
                      router.push('/console/webhooks');
                    } catch (err) {
                      setError(err);
                    }
                  }}
                >
                  Delete
                </button>
              </div>
              {revealing ? (
                <form onSubmit={onReveal} className="c-form" aria-label="Reveal the signing secret">
                  <label htmlFor="reveal-password">Your password</label>
                  <input
                    id="reveal-password"
                    type="password"
                    autoComplete="current-password"
                    required
                    value={password}
                    onChange={(e) => setPassword(e.target.value)}
                  />
                  <div className="c-row">
                    <button type="submit" className="c-button">
                      Show secret
                    </button>
                  </div>
                </form>
              ) : null}
              <h2>Edit</h2>
              <EndpointForm
                key={data.updated_at}
                initial={{ url: data.url, events: data.events, description: data.description }}
                submitLabel="Save changes"
                onSubmit={async (fields) => {
                  await api.webhooks.update.mutate({ id, ...fields });
                  setNotice('Saved.');
                  endpoint.refetch();
                }}
              />
            </>
          ) : (
            <p className="c-small c-muted">Events: {data.events.join(', ')}</p>
          )}
        </>
      ) : null}
    </>
  );
}

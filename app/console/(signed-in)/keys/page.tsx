'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { CopyButton, Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Mode = 'live' | 'test';

interface NewKey {
  name: string;
  api_key: string;
  mode: Mode;
}

export default function KeysPage() {
  const { canManage, me } = useSession();
  const queries = useQueryApi();
  const keys = useQuery(queries.keys.list.queryOptions());
  const [name, setName] = useState('');
  // A new key is of the mode the console shows, unless the form says otherwise.
  const [mode, setMode] = useState<Mode>(me.mode);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function onCreate(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const key = await api.keys.create.mutate({ name, mode });
      setCreated({ name: key.name, api_key: key.api_key, mode: key.mode });
      setName('');
      setError(undefined);
      keys.refetch();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function onRevoke(id: string, label: string) {
    if (!window.confirm(`Revoke the key "${label}"? Requests made with it will be refused at once.`)) return;
    try {
      await api.keys.revoke.mutate({ id });
      setError(undefined);
      keys.refetch();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <>
      <h1>API keys</h1>
      <p className="c-muted">
        Keys authenticate your servers to the REST API (<code>Authorization: Bearer …</code>). Only a hash is
        stored: a key is shown in full once, when it is created. A test key (<code>vouch_test_…</code>) works
        on test data only: its cases cost nothing, send no real mail or text message, and can be driven to an
        end with the simulate operation.
      </p>

      {canManage ? (
        <form onSubmit={onCreate} className="c-form c-inline">
          <label htmlFor="key-name">New key name</label>
          <input
            id="key-name"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="e.g. Production server"
          />
          <label htmlFor="key-mode">Mode</label>
          <select id="key-mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
            <option value="live">Live</option>
            <option value="test">Test</option>
          </select>
          <button type="submit" className="c-button" disabled={busy}>
            Create key
          </button>
        </form>
      ) : (
        <p className="c-notice">
          You have read-only access (viewer): you can see keys but not create or revoke them.
        </p>
      )}
      <ErrorNote error={error} />

      {created ? (
        <section className="c-secret" aria-labelledby="new-key-heading">
          <h2 id="new-key-heading">
            Your new {created.mode} key “{created.name}”
          </h2>
          <p>Copy it now: it will not be shown again.</p>
          <p>
            <code data-testid="new-api-key">{created.api_key}</code>
          </p>
          <div className="c-row">
            <CopyButton value={created.api_key} label="Copy key" />
            <button type="button" className="c-button c-secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        </section>
      ) : null}

      {keys.isPending ? <Loading what="keys" /> : null}
      <ErrorNote error={keys.error} />
      {keys.data && keys.data.length === 0 ? <Empty>No API keys yet.</Empty> : null}
      {keys.data && keys.data.length > 0 ? (
        <div className="c-table-wrap">
          <table className="c-stack">
            <caption className="c-sr">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Mode</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
                {canManage ? (
                  <th scope="col">
                    <span className="c-sr">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id}>
                  <td data-label="Name">{k.name || '(unnamed)'}</td>
                  <td data-label="Key">
                    <code>
                      {k.prefix}…{k.last_four}
                    </code>
                  </td>
                  <td data-label="Mode">{k.mode === 'live' ? 'Live' : 'Test'}</td>
                  <td data-label="Created">{formatDate(k.created_at)}</td>
                  <td data-label="Last used">{k.last_used_at ? formatDate(k.last_used_at) : 'Never'}</td>
                  <td data-label="State">
                    {k.revoked_at ? `Revoked ${formatDate(k.revoked_at)}` : 'Active'}
                  </td>
                  {canManage ? (
                    <td>
                      {k.revoked_at ? null : (
                        <button
                          type="button"
                          className="c-button c-danger"
                          onClick={() => onRevoke(k.id, k.name || `${k.prefix}…${k.last_four}`)}
                        >
                          Revoke<span className="c-sr"> {k.name || k.prefix}</span>
                        </button>
                      )}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

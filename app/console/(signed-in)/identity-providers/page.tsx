'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { CopyButton, Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type ClientWire = Awaited<ReturnType<typeof api.oidcClients.list.query>>['results'][number];

/** How long a replaced secret keeps working, as the rotation offers it. */
const GRACE_CHOICES = [
  { seconds: 0, label: 'Stop at once' },
  { seconds: 3600, label: 'Keep working for 1 hour' },
  { seconds: 86_400, label: 'Keep working for 24 hours' },
  { seconds: 7 * 86_400, label: 'Keep working for 7 days' },
];

/** A client secret shown once, after registration or rotation. */
function ClientSecret({
  client,
  secret,
  onDone,
}: {
  client: ClientWire;
  secret: string;
  onDone: () => void;
}) {
  return (
    <section className="c-secret" aria-labelledby="client-secret">
      <h2 id="client-secret">The secret of {client.name}</h2>
      <p>Copy it now into your identity provider’s settings: it is shown only this once.</p>
      <dl className="c-facts">
        <div>
          <dt>Client id</dt>
          <dd>
            <code className="c-break">{client.client_id}</code>
          </dd>
        </div>
        <div>
          <dt>Client secret</dt>
          <dd>
            <code className="c-break" data-testid="client-secret">
              {secret}
            </code>
          </dd>
        </div>
      </dl>
      <div className="c-row">
        <CopyButton value={secret} label="Copy secret" />
        <button type="button" className="c-button c-secondary" onClick={onDone}>
          Hide secret
        </button>
      </div>
    </section>
  );
}

function NewClientForm({ onCreated }: { onCreated: (c: ClientWire, s: string) => void }) {
  const queries = useQueryApi();
  const [name, setName] = useState('');
  const [uris, setUris] = useState('');
  const [template, setTemplate] = useState('');
  const [mode, setMode] = useState<'test' | 'live'>('test');
  // A client runs templates of its own mode: offer those of the mode chosen.
  const templates = useQuery(queries.templates.list.queryOptions({ mode }));
  const templateNames = templates.data?.results.map((t) => t.name) ?? [];
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { client_secret, ...client } = await api.oidcClients.create.mutate({
        name: name.trim(),
        redirect_uris: uris
          .split('\n')
          .map((uri) => uri.trim())
          .filter(Boolean),
        default_template: template || null,
        mode,
      });
      onCreated(client, client_secret);
      setName('');
      setUris('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="c-form c-panel" aria-labelledby="new-client">
      <h2 id="new-client">Register an identity provider</h2>
      <label htmlFor="client-name">Name</label>
      <input
        id="client-name"
        required
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <label htmlFor="client-uris">Redirect URIs, one a line (compared exactly; https)</label>
      <textarea id="client-uris" required value={uris} onChange={(e) => setUris(e.target.value)} />
      <fieldset className="c-fieldset">
        <legend>Which cases its flows open</legend>
        <label className="c-check">
          <input
            type="radio"
            name="client-mode"
            checked={mode === 'test'}
            onChange={() => {
              setMode('test');
              setTemplate('');
            }}
          />{' '}
          Test cases (nothing is charged; simulated checks)
        </label>
        <label className="c-check">
          <input
            type="radio"
            name="client-mode"
            checked={mode === 'live'}
            onChange={() => {
              setMode('live');
              setTemplate('');
            }}
          />{' '}
          Live cases
        </label>
      </fieldset>
      <label htmlFor="client-template">
        Template its flows run (unless they name one by scope), among the {mode} templates
      </label>
      <select id="client-template" value={template} onChange={(e) => setTemplate(e.target.value)}>
        <option value="">None: every flow names one</option>
        {templateNames.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <ErrorNote error={error} />
      <div className="c-row">
        <button type="submit" className="c-button" disabled={busy}>
          Register
        </button>
      </div>
    </form>
  );
}

function ClientActions({
  client,
  onSecret,
  onDeleted,
}: {
  client: ClientWire;
  onSecret: (s: string) => void;
  onDeleted: () => void;
}) {
  const [grace, setGrace] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="c-row c-wrap">
      <label htmlFor={`grace-${client.client_id}`} className="c-sr">
        The replaced secret of {client.name}
      </label>
      <select
        id={`grace-${client.client_id}`}
        value={grace}
        onChange={(e) => setGrace(Number(e.target.value))}
      >
        {GRACE_CHOICES.map((choice) => (
          <option key={choice.seconds} value={choice.seconds}>
            {choice.label}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="c-button c-secondary"
        disabled={busy}
        onClick={() =>
          run(async () => {
            const rotated = await api.oidcClients.rotateSecret.mutate({
              client_id: client.client_id,
              grace_seconds: grace,
            });
            onSecret(rotated.client_secret);
          })
        }
      >
        New secret<span className="c-sr"> for {client.name}</span>
      </button>
      <button
        type="button"
        className="c-button c-secondary"
        disabled={busy}
        onClick={() =>
          run(async () => {
            await api.oidcClients.delete.mutate({ client_id: client.client_id });
            onDeleted();
          })
        }
      >
        Remove<span className="c-sr"> {client.name}</span>
      </button>
      <ErrorNote error={error} />
    </div>
  );
}

export default function IdentityProvidersPage() {
  const queries = useQueryApi();
  const clients = useQuery(queries.oidcClients.list.queryOptions());
  const { canManage } = useSession();
  const [shown, setShown] = useState<{ client: ClientWire; secret: string } | null>(null);

  return (
    <>
      <h1>Identity providers</h1>
      <p className="c-muted">
        Okta (as a custom identity verification vendor) or any OpenID Connect relying party sends people here
        during account recovery or sign-in: each flow opens a case of your team from a template and answers
        the identity provider with the verdict. Register each identity provider as a client.
      </p>
      {shown ? (
        <ClientSecret client={shown.client} secret={shown.secret} onDone={() => setShown(null)} />
      ) : null}
      {clients.data ? (
        <section aria-labelledby="provider-values">
          <h2 id="provider-values">What your identity provider asks for</h2>
          <p className="c-muted">
            With the client’s id and secret, and the scopes <code>openid profile identity_assurance</code>{' '}
            (add <code>idv_flow_&lt;template&gt;</code> to run another template than the client’s).
          </p>
          <dl className="c-facts">
            {(
              [
                ['Issuer', clients.data.provider.issuer],
                [
                  'Pushed authorization request endpoint',
                  clients.data.provider.pushed_authorization_request_endpoint,
                ],
                ['Authorization endpoint', clients.data.provider.authorization_endpoint],
                ['Token endpoint', clients.data.provider.token_endpoint],
                ['JWKS endpoint', clients.data.provider.jwks_uri],
              ] as const
            ).map(([label, value]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>
                  <code className="c-break">{value}</code>{' '}
                  <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ) : null}
      {clients.isPending ? <Loading what="the identity providers" /> : null}
      <ErrorNote error={clients.error} />
      {clients.data && clients.data.results.length === 0 ? (
        <Empty>No identity provider registered yet.</Empty>
      ) : null}
      {clients.data && clients.data.results.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Your team’s identity providers</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Client</th>
                <th scope="col">Redirect URIs</th>
                {canManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {clients.data.results.map((client) => (
                <tr key={client.client_id}>
                  <td>
                    {client.name}
                    <div className="c-muted c-small">
                      {client.mode === 'live' ? 'Live cases' : 'Test cases'}
                      {client.default_template ? ` · template ${client.default_template}` : ''}
                    </div>
                  </td>
                  <td>
                    <code className="c-break">{client.client_id}</code>
                    <div className="c-muted c-small">
                      secret …{client.secret_hint}
                      {client.previous_secret_expires_at
                        ? ` · the previous one works until ${formatDate(client.previous_secret_expires_at)}`
                        : ''}
                    </div>
                  </td>
                  <td>
                    {client.redirect_uris.map((uri) => (
                      <div key={uri} className="c-break">
                        {uri}
                      </div>
                    ))}
                  </td>
                  {canManage ? (
                    <td>
                      <ClientActions
                        client={client}
                        onSecret={(secret) => {
                          setShown({ client, secret });
                          void clients.refetch();
                        }}
                        onDeleted={() => void clients.refetch()}
                      />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {canManage ? (
        <NewClientForm
          onCreated={(client, secret) => {
            setShown({ client, secret });
            void clients.refetch();
          }}
        />
      ) : null}
    </>
  );
}

'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { CopyButton, Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Before = { created_at: string; id: string } | undefined;

/**
 * The team's evidence key, shown to owners on request (each reveal is audited): the key of the
 * HMACs that stand for personal values in the tamper-evident log and in redacted cases' evidence
 * records, to hand to the team's auditor.
 */
function EvidenceKey() {
  const [key, setKey] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function reveal() {
    setBusy(true);
    setError(undefined);
    try {
      setKey((await api.audit.evidenceKey.mutate()).evidence_key);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="evidence-key">
      <h2 id="evidence-key">Evidence key</h2>
      <p className="c-muted">
        In the tamper-evident log and in the evidence records of erased cases, personal values (addresses,
        phone digits) appear only as <code>hmac:</code> — HMAC-SHA-256 under this key, base64url. Give it to
        your auditor: with it and a value they can check what was recorded; without it nobody can guess the
        values.
      </p>
      {key ? (
        <div className="c-row c-wrap">
          <code className="c-break" data-testid="evidence-key">
            {key}
          </code>
          <CopyButton value={key} label="Copy key" />
        </div>
      ) : (
        <button type="button" className="c-button c-secondary" disabled={busy} onClick={reveal}>
          Show the evidence key
        </button>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

export default function AuditPage() {
  const [before, setBefore] = useState<Before>();
  const [history, setHistory] = useState<Before[]>([]);
  const queries = useQueryApi();
  const { me } = useSession();
  const page = useQuery({
    ...queries.audit.list.queryOptions({ before }),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <h1>Audit log</h1>
      <p className="c-muted">
        Every change made in the console and through the API: who, what, when and from where. Entries are
        sealed into a hash chain a few seconds after they are written (their place shows as #), so a later
        edit of the log is detected.
      </p>
      {me.current_team?.role === 'owner' ? <EvidenceKey /> : null}
      {page.isFetching ? <Loading what="the audit log" /> : null}
      <ErrorNote error={page.error} />
      {page.data && page.data.entries.length === 0 ? <Empty>Nothing has been changed yet.</Empty> : null}
      {page.data && page.data.entries.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Audit log</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {page.data.entries.map((e) => (
                <tr key={e.id}>
                  <td>
                    {formatDate(e.created_at)}
                    <div className="c-muted c-small">
                      {e.chain_seq === null ? 'sealing…' : `#${e.chain_seq}`}
                    </div>
                  </td>
                  <td>{e.actor_email}</td>
                  <td>
                    <code>{e.action}</code>
                    {e.target ? <span className="c-muted"> {e.target}</span> : null}
                    {Object.keys(e.details).length > 0 ? (
                      <div className="c-muted c-small">
                        {Object.entries(e.details)
                          .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
                          .join(', ')}
                      </div>
                    ) : null}
                  </td>
                  <td>
                    {e.ip_address ?? '—'}
                    {e.user_agent ? <div className="c-muted c-small">{e.user_agent.slice(0, 80)}</div> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {page.data ? (
        <nav aria-label="Pages of the audit log" className="c-row">
          <button
            type="button"
            className="c-button c-secondary"
            disabled={history.length === 0}
            onClick={() => {
              setBefore(history.at(-1));
              setHistory(history.slice(0, -1));
            }}
          >
            Newer
          </button>
          <button
            type="button"
            className="c-button c-secondary"
            disabled={!page.data.next}
            onClick={() => {
              setHistory([...history, before]);
              setBefore(page.data?.next ?? undefined);
            }}
          >
            Older
          </button>
        </nav>
      ) : null}
    </>
  );
}

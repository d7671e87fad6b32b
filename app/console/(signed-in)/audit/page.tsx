'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Before = { created_at: string; id: string } | undefined;

export default function AuditPage() {
  const [before, setBefore] = useState<Before>();
  const [history, setHistory] = useState<Before[]>([]);
  const queries = useQueryApi();
  const page = useQuery({
    ...queries.audit.list.queryOptions({ before }),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <h1>Audit log</h1>
      <p className="c-muted">Every change made in the console: who, what, when and from where.</p>
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
                  <td>{formatDate(e.created_at)}</td>
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

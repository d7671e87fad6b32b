'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { saveFile } from '@/app/console/_lib/save-file';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, formatInstant, Loading } from '@/app/console/_lib/ui';

/** How often a running import is read again: the bar moves without a reload. */
const PROGRESS_REFRESH_MS = 1_000;

type ImportWire = Awaited<ReturnType<typeof api.imports.get.query>>;

/** Saves the result file: the server writes it, the browser only hands it to the user. */
async function downloadResult(id: string) {
  const { file_name, csv } = await api.imports.result.query({ id });
  saveFile(file_name, csv, 'text/csv;charset=utf-8');
}

function RefusedRows({ current }: { current: ImportWire }) {
  if (current.refused.length === 0) return null;
  const refusedTotal = current.rejected_rows + current.failed_count;
  return (
    <section aria-labelledby="refused-rows">
      <h2 id="refused-rows">Rows refused</h2>
      {refusedTotal > current.refused.length ? (
        <p className="c-small">
          The first {current.refused.length} of {refusedTotal.toLocaleString()}; the result file lists them
          all.
        </p>
      ) : null}
      <div className="c-table-wrap">
        <table aria-labelledby="refused-rows">
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {current.refused.map((row) => (
              <tr key={row.line}>
                <td>{row.line}</td>
                <td>{row.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/**
 * One import: while a draft, what will happen row by row and the button that starts it; while it
 * runs (in the worker: closing the page or restarting the service does not stop it), its
 * progress and the button that cancels it; once ended, the result file.
 */
export default function ImportPage() {
  const { id } = useParams<{ id: string }>();
  const queries = useQueryApi();
  const current = useQuery({
    ...queries.imports.get.queryOptions({ id }),
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      return status === 'queued' || status === 'running' ? PROGRESS_REFRESH_MS : false;
    },
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  async function act(action: () => Promise<unknown>) {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      await current.refetch();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const data = current.data;
  const done = data ? data.created_count + data.failed_count : 0;
  return (
    <>
      <p>
        <Link href="/console/cases/import">← Imports</Link>
      </p>
      <h1>Import of {data?.file_name ?? 'a file'}</h1>
      {current.isPending ? <Loading what="the import" /> : null}
      <ErrorNote error={current.error} />
      {data ? (
        <>
          <p>
            {data.total_rows.toLocaleString()} rows: <strong>{data.valid_rows.toLocaleString()}</strong> can
            become {data.livemode ? 'live' : 'test'} cases
            {data.rejected_rows > 0 ? `, ${data.rejected_rows.toLocaleString()} refused by the check` : ''}.
          </p>
          {data.status === 'draft' ? (
            <div className="c-row c-wrap">
              {data.valid_rows > 0 ? (
                <button
                  type="button"
                  className="c-button"
                  disabled={busy}
                  onClick={() => act(() => api.imports.start.mutate({ id }))}
                >
                  Create {data.valid_rows.toLocaleString()} {data.valid_rows === 1 ? 'case' : 'cases'}
                </button>
              ) : (
                <p>No row of this file can become a case: correct the rows below and upload it again.</p>
              )}
              <button
                type="button"
                className="c-button c-secondary"
                disabled={busy}
                onClick={() => act(() => api.imports.cancel.mutate({ id }))}
              >
                Discard
              </button>
            </div>
          ) : (
            <section aria-labelledby="import-progress">
              <h2 id="import-progress">
                {data.status === 'queued' || data.status === 'running'
                  ? 'Creating the cases'
                  : data.status === 'succeeded'
                    ? 'Finished'
                    : 'Canceled'}
              </h2>
              <progress
                className="c-progress"
                max={Math.max(data.valid_rows, 1)}
                value={done}
                aria-labelledby="import-progress"
              />
              <p role="status" aria-live="polite">
                {data.created_count.toLocaleString()} created
                {data.failed_count > 0 ? `, ${data.failed_count.toLocaleString()} refused` : ''} of{' '}
                {data.valid_rows.toLocaleString()}
                {data.finished_at ? ` (ended ${formatInstant(data.finished_at)})` : ''}.
              </p>
              <div className="c-row c-wrap">
                {data.status === 'queued' || data.status === 'running' ? (
                  <button
                    type="button"
                    className="c-button c-secondary"
                    disabled={busy}
                    onClick={() => act(() => api.imports.cancel.mutate({ id }))}
                  >
                    Cancel the import
                  </button>
                ) : (
                  <button
                    type="button"
                    className="c-button"
                    disabled={busy}
                    onClick={() => act(() => downloadResult(id))}
                  >
                    Download the result (CSV)
                  </button>
                )}
              </div>
            </section>
          )}
          <ErrorNote error={error} />
          <RefusedRows current={data} />
        </>
      ) : null}
    </>
  );
}

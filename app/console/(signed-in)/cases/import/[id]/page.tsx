'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { saveFile } from '@/app/console/_lib/save-file';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, formatCents, formatDate, formatInstant, Loading } from '@/app/console/_lib/ui';
import { methodLabel } from '@/server/api/console/method-vocabulary';

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

type Forecast = NonNullable<ImportWire['forecast']>;

/** "1 row", "1,951 rows". */
function rows(n: number): string {
  return `${n.toLocaleString()} ${n === 1 ? 'row' : 'rows'}`;
}

/** A method's name inside a sentence: "e-mail", "custom question", but "SMS", "government ID". */
function inSentence(label: string): string {
  // Not an acronym's (SMS): E-mail becomes e-mail, Government ID government ID.
  return /^[A-Z](?![A-Z])/.test(label) ? label[0]?.toLowerCase() + label.slice(1) : label;
}

/**
 * What starting a draft will do, in words, with the plan's limits it follows from: the same
 * pricing as the creation, foreseen (server/application/case-imports/forecast-case-import.ts).
 */
function ForecastSummary({ forecast, validRows }: { forecast: Forecast; validRows: number }) {
  if (!forecast.charged) {
    return (
      <p>
        Test mode charges nothing: <strong>all {rows(validRows)}</strong> can become test cases.
      </p>
    );
  }
  const outcome = (
    <>
      <strong>{rows(forecast.creatable)} can become cases</strong>
      {forecast.refused > 0 ? `, ${forecast.refused.toLocaleString()} would be refused` : ''}.
    </>
  );
  if (forecast.reason_code === 'TRIAL_EXPIRED') {
    return (
      <p>
        {forecast.reason} No row can become a case: all {rows(forecast.refused)} would be refused.
      </p>
    );
  }
  const left = forecast.units_left.map(
    ({ method, units }) =>
      `${units.toLocaleString()} ${inSentence(methodLabel(method))} ${units === 1 ? 'unit' : 'units'}`,
  );
  const single = forecast.units_left.length === 1 && forecast.units_left[0]?.units === 1;
  const trialEnd =
    forecast.subscription_status === 'trialing' && forecast.trial_ends_at
      ? ` (until ${formatDate(forecast.trial_ends_at)})`
      : '';
  return (
    <>
      <p>
        Your {forecast.plan_name} plan{trialEnd} includes {forecast.included_units?.toLocaleString()} units of
        each method per billing period (this one ends {formatDate(forecast.period_end)});{' '}
        {left.length > 1 ? `${left.slice(0, -1).join(', ')} and ${left.at(-1)}` : left[0]}{' '}
        {single ? 'is' : 'are'} left and the top-up balance is{' '}
        {formatCents(forecast.topup_balance_cents ?? 0)}: {outcome}
      </p>
      {forecast.refused > 0 && forecast.reason ? (
        <p>
          Why the others would be refused: {forecast.reason} Each refused row is named in the result file.
        </p>
      ) : null}
      <p className="c-small">
        A forecast: cases your team opens meanwhile (through the API, here, or another import) use the same
        units and balance, so fewer may be created.
      </p>
    </>
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
      // A start refused because the forecast moved shows the new one, for confirming again.
      await current.refetch();
    } finally {
      setBusy(false);
    }
  }

  const data = current.data;
  const done = data ? data.created_count + data.failed_count : 0;
  // What the owner confirms: the forecast's count, which the start checks again.
  const creatable = data?.forecast?.creatable ?? data?.valid_rows ?? 0;
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
            {data.total_rows.toLocaleString()} rows: <strong>{data.valid_rows.toLocaleString()}</strong>{' '}
            passed the check for {data.livemode ? 'live' : 'test'} cases
            {data.rejected_rows > 0 ? `, ${data.rejected_rows.toLocaleString()} refused by the check` : ''}.
          </p>
          {data.status === 'draft' && data.forecast && data.valid_rows > 0 ? (
            <section aria-labelledby="import-forecast">
              <h2 id="import-forecast">What starting it will do</h2>
              <ForecastSummary forecast={data.forecast} validRows={data.valid_rows} />
            </section>
          ) : null}
          {data.status === 'draft' ? (
            <div className="c-row c-wrap">
              {data.valid_rows === 0 ? (
                <p>No row of this file can become a case: correct the rows below and upload it again.</p>
              ) : creatable === 0 ? (
                <p>
                  No row can become a case now (see above): discard this import, and upload the file again
                  once the plan allows it.
                </p>
              ) : (
                <>
                  <button
                    type="button"
                    className="c-button"
                    disabled={busy}
                    onClick={() =>
                      act(() => api.imports.start.mutate({ id, confirmed_creatable: creatable }))
                    }
                  >
                    Create {creatable.toLocaleString()} {creatable === 1 ? 'case' : 'cases'}
                  </button>
                  {data.forecast && data.forecast.refused > 0 ? (
                    <p className="c-small">
                      The other {rows(data.forecast.refused)} will be refused and listed in the result file.
                    </p>
                  ) : null}
                </>
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

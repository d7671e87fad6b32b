'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, Loading } from '@/app/console/_lib/ui';

/**
 * How long the team keeps ended cases: after that many days the daily retention job erases the
 * person's data from them (as "Erase personal data" would). Owners and admins change it.
 */
export function RetentionSettings() {
  const { canManage } = useSession();
  const queries = useQueryApi();
  const current = useQuery(queries.team.retention.queryOptions());
  const [keep, setKeep] = useState<'forever' | 'days'>('forever');
  const [days, setDays] = useState('90');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState('');
  const stored = current.data?.retention_days;

  useEffect(() => {
    if (stored === undefined) return;
    setKeep(stored === null ? 'forever' : 'days');
    if (stored !== null) setDays(String(stored));
  }, [stored]);

  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSaved('');
    try {
      const result = await api.team.setRetention.mutate({
        retention_days: keep === 'forever' ? null : Number(days),
      });
      setSaved(
        result.retention_days === null
          ? 'Saved: ended cases are kept until someone erases them.'
          : `Saved: the person’s data is erased from cases ended over ${result.retention_days} days ago.`,
      );
      current.refetch();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="retention">
      <h2 id="retention">Data retention</h2>
      {current.isPending ? <Loading what="the retention period" /> : null}
      <ErrorNote error={current.error} />
      {current.data && !canManage ? (
        <p>
          {stored === null
            ? 'Ended cases are kept until someone erases them.'
            : `The person’s data is erased from cases that ended over ${stored} days ago.`}
        </p>
      ) : null}
      {current.data && canManage ? (
        <form onSubmit={save} className="c-form">
          <fieldset className="c-fieldset">
            <legend>Keep ended cases</legend>
            <label className="c-check">
              <input
                type="radio"
                name="keep"
                checked={keep === 'forever'}
                onChange={() => setKeep('forever')}
              />{' '}
              Until someone erases them
            </label>
            <label className="c-check">
              <input type="radio" name="keep" checked={keep === 'days'} onChange={() => setKeep('days')} />{' '}
              For a number of days, then erase the person’s data
            </label>
          </fieldset>
          {keep === 'days' ? (
            <>
              <label htmlFor="retention-days">Days</label>
              <input
                id="retention-days"
                type="number"
                min={1}
                max={3650}
                required
                value={days}
                onChange={(e) => setDays(e.target.value)}
              />
            </>
          ) : null}
          <ErrorNote error={error} />
          <p role="status" aria-live="polite" className="c-muted">
            {saved}
          </p>
          <div className="c-row">
            <button type="submit" className="c-button" disabled={busy}>
              Save retention
            </button>
          </div>
        </form>
      ) : null}
    </section>
  );
}

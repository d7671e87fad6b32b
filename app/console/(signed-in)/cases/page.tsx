'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { type FormEvent, useState } from 'react';
import { switchMode } from '@/app/console/_lib/mode';
import { useSession } from '@/app/console/_lib/session';
import { useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';
import { NewCaseForm } from './new-case-form';

type Status = 'open' | 'closed' | 'failed' | 'expired';

interface Filters {
  status?: Status;
  subject_email?: string;
  created_after?: string;
  created_before?: string;
  cursor?: string;
}

/** A date input's day as the start of that UTC day. */
function dayStart(value: string): string | undefined {
  return value ? new Date(`${value}T00:00:00Z`).toISOString() : undefined;
}

export default function CasesPage() {
  const [filters, setFilters] = useState<Filters>({});
  const [status, setStatus] = useState('');
  const [email, setEmail] = useState('');
  const [after, setAfter] = useState('');
  const [before, setBefore] = useState('');
  const queries = useQueryApi();
  const page = useQuery({ ...queries.cases.list.queryOptions(filters), placeholderData: keepPreviousData });
  const { me, canManage } = useSession();
  const otherMode = me.mode === 'live' ? 'test' : 'live';
  const [creating, setCreating] = useState(false);

  function onFilter(event: FormEvent) {
    event.preventDefault();
    setFilters({
      status: (status || undefined) as Status | undefined,
      subject_email: email.trim() ? email.trim().toLowerCase() : undefined,
      created_after: dayStart(after),
      created_before: dayStart(before),
    });
  }

  const go = (cursor: string | null) => cursor && setFilters({ ...filters, cursor });

  return (
    <>
      <h1>Cases</h1>
      {canManage ? (
        creating ? (
          <NewCaseForm />
        ) : (
          <div className="c-row">
            <button type="button" className="c-button" onClick={() => setCreating(true)}>
              New case
            </button>
            <Link href="/console/cases/import" className="c-button c-secondary">
              Import from CSV
            </Link>
          </div>
        )
      ) : null}
      <h2 id="find-cases">Find cases</h2>
      <form onSubmit={onFilter} className="c-form c-filters" aria-labelledby="find-cases">
        <div>
          <label htmlFor="f-email">Subject e-mail</label>
          <input id="f-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div>
          <label htmlFor="f-status">Status</label>
          <select id="f-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any</option>
            <option value="open">Open</option>
            <option value="closed">Closed</option>
            <option value="failed">Failed</option>
            <option value="expired">Expired</option>
          </select>
        </div>
        <div>
          <label htmlFor="f-after">Created on or after</label>
          <input id="f-after" type="date" value={after} onChange={(e) => setAfter(e.target.value)} />
        </div>
        <div>
          <label htmlFor="f-before">Created before</label>
          <input id="f-before" type="date" value={before} onChange={(e) => setBefore(e.target.value)} />
        </div>
        {/* Secondary and only as wide as its word: opening a case is the page's main action. */}
        <div className="c-filter-action">
          <button type="submit" className="c-button c-secondary">
            Search
          </button>
        </div>
      </form>

      {page.isFetching ? <Loading what="cases" /> : null}
      <ErrorNote error={page.error} />
      {page.data && page.data.results.length === 0 ? (
        <Empty>
          No {me.mode} cases match.{' '}
          {page.data.other_mode_matches ? (
            <>
              Your {otherMode} data has cases that match (made with {otherMode} keys).{' '}
              <button type="button" className="c-button c-secondary" onClick={() => switchMode(otherMode)}>
                Show {otherMode} data
              </button>
            </>
          ) : (
            'Cases are opened here (New case) or through the API (POST /v1/cases/).'
          )}
        </Empty>
      ) : null}
      {page.data && page.data.results.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Cases</caption>
            <thead>
              <tr>
                <th scope="col">Subject</th>
                <th scope="col">Status</th>
                <th scope="col">Methods verified</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {page.data.results.map((c) => {
                const methods = Object.values(c.verification_methods).filter((m) => m.requested);
                return (
                  <tr key={c.id}>
                    <td>
                      <Link href={`/console/cases/${c.id}`}>{c.subject_email}</Link>
                      {/* The name given at creation (an import's name column), or the ID document's. */}
                      {c.subject_name ? <div className="c-small c-muted">{c.subject_name}</div> : null}
                    </td>
                    <td>
                      <span className={`c-status c-status-${c.status}`}>{c.status}</span>
                    </td>
                    <td>
                      {methods.filter((m) => m.verified).length} of {methods.length}
                    </td>
                    <td>{formatDate(c.created_at)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {page.data ? (
        <nav aria-label="Pages of cases" className="c-row">
          <button
            type="button"
            className="c-button c-secondary"
            disabled={!page.data.previous_cursor}
            onClick={() => go(page.data?.previous_cursor ?? null)}
          >
            Newer
          </button>
          <button
            type="button"
            className="c-button c-secondary"
            disabled={!page.data.next_cursor}
            onClick={() => go(page.data?.next_cursor ?? null)}
          >
            Older
          </button>
        </nav>
      ) : null}
    </>
  );
}

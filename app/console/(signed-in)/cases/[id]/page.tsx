'use client';

import Link from 'next/link';
import { useParams } from 'next/navigation';
import { api } from '@/app/console/_lib/trpc';
import { CopyButton, Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';
import { useLoad } from '@/app/console/_lib/use-load';

const METHOD_NAMES: Record<string, string> = {
  email: 'E-mail',
  sms: 'SMS',
  government_id: 'Government ID',
  selfie: 'Selfie',
  custom_question: 'Custom question',
  manager: 'Manager',
};

export default function CasePage() {
  const { id } = useParams<{ id: string }>();
  const detail = useLoad(() => api.cases.get.query({ id }), id);
  const data = detail.data;

  return (
    <>
      <p>
        <Link href="/console/cases">← All cases</Link>
      </p>
      {detail.loading && !data ? <Loading what="the case" /> : null}
      <ErrorNote error={detail.error} />
      {data ? (
        <>
          <h1>Case for {data.case.subject_email}</h1>
          <dl className="c-facts">
            <div>
              <dt>Status</dt>
              <dd>
                <span className={`c-status c-status-${data.case.status}`}>{data.case.status}</span>
                {data.case.failure_reason ? ` — ${data.case.failure_reason}` : ''}
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{formatDate(data.case.created_at)}</dd>
            </div>
            <div>
              <dt>Expires</dt>
              <dd>{formatDate(data.case.expires_at)}</dd>
            </div>
            <div>
              <dt>Case id</dt>
              <dd>
                <code>{data.case.id}</code>
              </dd>
            </div>
          </dl>
          <div className="c-row">
            <CopyButton value={data.case.verification_url} label="Copy verification link" />
          </div>
          {data.case.notes ? (
            <>
              <h2>Notes</h2>
              <p className="c-pre">{data.case.notes}</p>
            </>
          ) : null}

          <h2>Methods</h2>
          <ul className="c-list">
            {Object.entries(data.case.verification_methods)
              .filter(([, m]) => m.requested)
              .map(([method, m]) => (
                <li key={method}>
                  <strong>{METHOD_NAMES[method] ?? method}</strong>:{' '}
                  {m.verified ? 'verified' : 'not verified yet'}
                </li>
              ))}
          </ul>

          <h2>Timeline</h2>
          {data.events.length === 0 ? <Empty>No events yet.</Empty> : null}
          <ol className="c-timeline">
            {data.events.map((e) => (
              <li key={e.id}>
                <time dateTime={e.created_at}>{formatDate(e.created_at)}</time> <code>{e.type}</code>
                {typeof e.data.method === 'string'
                  ? ` (${METHOD_NAMES[e.data.method] ?? e.data.method})`
                  : ''}
              </li>
            ))}
          </ol>

          <h2>Webhook deliveries</h2>
          {data.deliveries.length === 0 ? <Empty>No webhook deliveries for this case.</Empty> : null}
          {data.deliveries.length > 0 ? (
            <div className="c-table-wrap">
              <table>
                <caption className="c-sr">Webhook deliveries of this case</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {data.deliveries.map((d) => (
                    <tr key={d.id}>
                      <td>
                        <code>{d.event_type}</code>
                      </td>
                      <td>
                        <span className={`c-status c-status-${d.status}`}>{d.status}</span>
                        {d.last_response_status ? ` (HTTP ${d.last_response_status})` : ''}
                      </td>
                      <td>{d.attempt_count}</td>
                      <td>{formatDate(d.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </>
      ) : null}
    </>
  );
}

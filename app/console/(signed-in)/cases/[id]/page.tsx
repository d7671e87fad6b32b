'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useState } from 'react';
import { saveFile } from '@/app/console/_lib/save-file';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { CopyButton, Empty, ErrorNote, formatDate, formatInstant, Loading } from '@/app/console/_lib/ui';
import { LINK_MAILING_METHODS, methodLabel } from '@/server/api/console/method-vocabulary';

/** How often an open case is read again, so the page follows the subject without a reload. */
const LIVE_REFRESH_MS = 2_000;

type CaseWire = Awaited<ReturnType<typeof api.cases.get.query>>['case'];

/**
 * What a helpdesk agent does with a case: mail its links again, cancel it, erase the person's
 * data. Each is audited; the page shows the case as the action left it.
 */
function CaseActions({ current, onChanged }: { current: CaseWire; onChanged: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState('');
  const [confirmErase, setConfirmErase] = useState(false);
  const open = current.status === 'open';

  async function run(what: string, action: () => Promise<unknown>) {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await action();
      setDone(what);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      setConfirmErase(false);
    }
  }

  const mailed = LINK_MAILING_METHODS.some(
    (m) => current.verification_methods[m].requested && !current.verification_methods[m].verified,
  );
  return (
    <section aria-labelledby="case-actions">
      <h2 id="case-actions">Actions</h2>
      <div className="c-row c-wrap">
        {open && mailed ? (
          <button
            type="button"
            className="c-button c-secondary"
            disabled={busy}
            onClick={() =>
              run('New links were mailed; the earlier ones no longer work.', () =>
                api.cases.resend.mutate({ id: current.id }),
              )
            }
          >
            Mail the links again
          </button>
        ) : null}
        {open ? (
          <button
            type="button"
            className="c-button c-secondary"
            disabled={busy}
            onClick={() => run('The case is canceled.', () => api.cases.cancel.mutate({ id: current.id }))}
          >
            Cancel case
          </button>
        ) : null}
        {current.redacted_at ? null : confirmErase ? (
          <>
            <button
              type="button"
              className="c-button c-danger"
              disabled={busy}
              onClick={() =>
                run('The person’s data is erased.', () => api.cases.redact.mutate({ id: current.id }))
              }
            >
              Erase for good
            </button>
            <button type="button" className="c-button c-secondary" onClick={() => setConfirmErase(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button
            type="button"
            className="c-button c-secondary"
            disabled={busy}
            onClick={() => setConfirmErase(true)}
          >
            Erase personal data
          </button>
        )}
      </div>
      {confirmErase ? (
        <p className="c-muted">
          This erases the subject’s e-mail, name and notes, the manager’s details and the case’s mails and
          event bodies. It cannot be undone{open ? ', and cancels the open case' : ''}.
        </p>
      ) : null}
      <p role="status" aria-live="polite" className="c-muted">
        {done}
      </p>
      <ErrorNote error={error} />
    </section>
  );
}

/**
 * The case's signed evidence record, for any member: the signed JSON an auditor verifies, or a PDF
 * for people with the same record attached. Each download is audited.
 */
function EvidenceDownloads({ current }: { current: CaseWire }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function download(format: 'json' | 'pdf') {
    setBusy(true);
    setError(undefined);
    try {
      const file = await api.cases.evidence.mutate({ id: current.id, format });
      const bytes = Uint8Array.from(atob(file.content_base64), (char) => char.charCodeAt(0));
      saveFile(file.file_name, bytes, file.media_type);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="case-evidence">
      <h2 id="case-evidence">Evidence record</h2>
      <p className="c-muted">
        A record of this case signed by Vouch: its steps and what each checked, its events and its audit
        entries as the tamper-evident log sealed them
        {current.status === 'open' ? ' (provisional while the case is open)' : ''}. Anyone can verify it
        against the published keys; each download is recorded in the audit log.
      </p>
      <div className="c-row c-wrap">
        <button
          type="button"
          className="c-button c-secondary"
          disabled={busy}
          onClick={() => download('pdf')}
        >
          Download PDF
        </button>
        <button
          type="button"
          className="c-button c-secondary"
          disabled={busy}
          onClick={() => download('json')}
        >
          Download signed JSON
        </button>
      </div>
      <ErrorNote error={error} />
    </section>
  );
}

/** What an ended case's end is called, by its status. */
const ENDED: Record<string, string> = { closed: 'Closed', failed: 'Failed', expired: 'Expired' };

type PasskeyWire = Awaited<ReturnType<typeof api.passkeys.list.query>>['results'][number];

/**
 * The subject's passkeys (of this team and mode): which case saved each, when it was last used,
 * and, for owners and admins, Revoke (audited; no case can verify the person by it afterwards).
 */
function SubjectPasskeys({ subjectEmail, canManage }: { subjectEmail: string; canManage: boolean }) {
  const queries = useQueryApi();
  const listed = useQuery(queries.passkeys.list.queryOptions({ subject_email: subjectEmail }));
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState('');

  async function revoke(passkey: PasskeyWire) {
    setError(undefined);
    setDone('');
    try {
      await api.passkeys.revoke.mutate({ id: passkey.id });
      setDone('The passkey is revoked.');
      await listed.refetch();
    } catch (err) {
      setError(err);
    }
  }

  const passkeys = listed.data?.results ?? [];
  return (
    <section aria-labelledby="subject-passkeys">
      <h2 id="subject-passkeys">Passkeys of this person</h2>
      <ErrorNote error={listed.error ?? error} />
      {listed.isPending ? <Loading what="the passkeys" /> : null}
      {listed.data && passkeys.length === 0 ? <Empty>No passkey saved.</Empty> : null}
      {passkeys.length > 0 ? (
        <ul className="c-list">
          {passkeys.map((passkey) => (
            <li key={passkey.id}>
              Saved {formatDate(passkey.created_at)} by{' '}
              <Link href={`/console/cases/${passkey.enrolling_case_id}`}>its case</Link>
              {passkey.device_type === 'multi_device' ? ' (synced between devices)' : ' (one device)'}; last
              used {passkey.last_used_at ? formatDate(passkey.last_used_at) : 'never'}{' '}
              {canManage ? (
                <button type="button" className="c-button c-secondary" onClick={() => revoke(passkey)}>
                  Revoke
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <p role="status" aria-live="polite" className="c-muted">
        {done}
      </p>
    </section>
  );
}

export default function CasePage() {
  const { id } = useParams<{ id: string }>();
  const queries = useQueryApi();
  const detail = useQuery({
    ...queries.cases.get.queryOptions({ id }),
    refetchInterval: (query) => (query.state.data?.case.status === 'open' ? LIVE_REFRESH_MS : false),
  });
  const data = detail.data;
  const { canManage } = useSession();
  const open = data?.case.status === 'open';

  return (
    <>
      <p>
        <Link href="/console/cases">← All cases</Link>
      </p>
      {detail.isPending ? <Loading what="the case" /> : null}
      <ErrorNote error={detail.error} />
      {data ? (
        <>
          <h1 className="c-break">Case for {data.case.subject_email}</h1>
          <dl className="c-facts">
            {data.case.subject_name ? (
              <div>
                <dt>Name</dt>
                <dd>{data.case.subject_name}</dd>
              </div>
            ) : null}
            {data.case.document_name ? (
              <div>
                <dt>Name on the ID document</dt>
                <dd>
                  {data.case.document_name}
                  {data.case.verification_methods.government_id.name_matched === false
                    ? data.case.name_match === 'record'
                      ? ' — differs from the name given (recorded; the case may close)'
                      : ' — differs from the name given'
                    : data.case.verification_methods.government_id.name_matched === true
                      ? ' — matches the name given'
                      : ''}
                </dd>
              </div>
            ) : null}
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
            {open ? (
              <div>
                <dt>Expires</dt>
                <dd>{formatDate(data.case.expires_at)}</dd>
              </div>
            ) : (
              // An ended case has no deadline left: when it ended, to the second like its timeline.
              <div>
                <dt>{data.case.canceled_at ? 'Canceled' : ENDED[data.case.status]}</dt>
                <dd>{formatInstant(data.ended_at)}</dd>
              </div>
            )}
            {data.case.redacted_at ? (
              <div>
                <dt>Personal data erased</dt>
                <dd>{formatInstant(data.case.redacted_at)}</dd>
              </div>
            ) : null}
            <div>
              <dt>Case id</dt>
              <dd>
                <code className="c-break">{data.case.id}</code>
              </dd>
            </div>
          </dl>
          {data.case.verification_url ? (
            <div className="c-row">
              <CopyButton value={data.case.verification_url} label="Copy verification link" />
            </div>
          ) : null}
          {canManage ? <CaseActions current={data.case} onChanged={() => detail.refetch()} /> : null}
          <EvidenceDownloads current={data.case} />
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
                  <strong>{methodLabel(method)}</strong>: {m.verified ? 'verified' : 'not verified yet'}
                </li>
              ))}
          </ul>

          {data.case.redacted_at ? null : (
            <SubjectPasskeys subjectEmail={data.case.subject_email} canManage={canManage} />
          )}

          <h2>Timeline</h2>
          {data.events.length === 0 ? <Empty>No events yet.</Empty> : null}
          <ol className="c-timeline">
            {data.events.map((e) => (
              <li key={e.id}>
                <time dateTime={e.created_at}>{formatInstant(e.created_at)}</time> <code>{e.type}</code>
                {typeof e.data.method === 'string' ? ` (${methodLabel(e.data.method)})` : ''}
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
                      <td>{formatInstant(d.created_at)}</td>
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

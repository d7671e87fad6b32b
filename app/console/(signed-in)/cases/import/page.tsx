'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';
import { type ChosenMethod, IMPORT_FORM } from '@/server/api/console/method-vocabulary';

/** The server's limit (server/case-imports/read-import-csv.ts), said before a long upload. */
const MAX_FILE_BYTES = 900_000;

const EXAMPLE_FILE = [
  'email,name,methods',
  'ana.lopez@example.com,Ana López,email government_id',
  'bo.chen@example.com,Bo Chen,',
].join('\r\n');

/**
 * An owner or admin imports a wave of new hires: a CSV file, one case per row. The rows are
 * checked first (the next page shows what will happen, row by row), and nothing is created
 * until the import is confirmed there.
 */
export default function ImportCasesPage() {
  const router = useRouter();
  const { me, canManage } = useSession();
  const queries = useQueryApi();
  const recent = useQuery({ ...queries.imports.list.queryOptions(), enabled: canManage });
  const [file, setFile] = useState<File | null>(null);
  const [methods, setMethods] = useState<ChosenMethod[]>([IMPORT_FORM.initial]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  async function check(event: FormEvent) {
    event.preventDefault();
    if (!file) return;
    setError(undefined);
    if (file.size > MAX_FILE_BYTES) {
      setError(
        new Error(`The file is larger than ${MAX_FILE_BYTES / 1000} KB; split it into several files.`),
      );
      return;
    }
    setBusy(true);
    try {
      const draft = await api.imports.draft.mutate({
        file_name: file.name,
        csv: await file.text(),
        default_methods: methods,
      });
      router.push(`/console/cases/import/${draft.id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  if (!canManage) {
    return (
      <>
        <h1>Import cases</h1>
        <Empty>Only owners and admins import cases. Your role in this team is read-only (viewer).</Empty>
      </>
    );
  }

  return (
    <>
      <p>
        <Link href="/console/cases">← Cases</Link>
      </p>
      <h1>Import cases from a CSV file</h1>
      {/* What a case costs and where its mail goes differ by mode: test mode charges nothing and
          mails no one (decisions: "Test mode and simulation"). */}
      {me.mode === 'live' ? (
        <p>
          One case per row, opened in <strong>live</strong> mode as if you opened each one here: each uses one
          unit of your plan per method (or top-up balance once the plan&apos;s units are used), is mailed to
          its subject, sent to your webhooks and recorded in the audit log. The check tells you how many rows
          your plan and balance cover before anything is created. The first row names the columns:
        </p>
      ) : (
        <p>
          One case per row, opened in <strong>test</strong> mode as if you opened each one here: each is free
          (test mode charges nothing and counts no usage), its mail goes to the Mailbox here and never to the
          subject or a manager, and it is sent to your test webhooks and recorded in the audit log. The first
          row names the columns:
        </p>
      )}
      <ul>
        <li>
          <code>email</code> (required) and <code>name</code>,
        </li>
        <li>
          <code>methods</code>, the row’s methods separated by spaces (<code>email</code>, <code>sms</code>,{' '}
          <code>government_id</code>, <code>custom_question</code>, <code>manager</code>); a row without them
          gets the methods chosen below,
        </li>
        <li>
          <code>language</code> (such as <code>de</code> or <code>pt-BR</code>), <code>notes</code>, and for
          the methods that need them <code>manager_name</code>, <code>manager_email</code>,{' '}
          <code>custom_question_text</code> and <code>custom_question_answer</code>.
        </li>
      </ul>
      <p className="c-small">
        At most 10,000 rows and 900 KB a file. Example:{' '}
        <a
          href={`data:text/csv;charset=utf-8,${encodeURIComponent(EXAMPLE_FILE)}`}
          download="vouch-import-example.csv"
        >
          vouch-import-example.csv
        </a>
      </p>
      <form onSubmit={check} className="c-form c-panel" aria-labelledby="import-file">
        <h2 id="import-file">Check a file</h2>
        <label htmlFor="import-csv">CSV file</label>
        <input
          id="import-csv"
          type="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
        <fieldset className="c-fieldset">
          <legend>Methods for rows that name none</legend>
          {IMPORT_FORM.choices.map(({ key, label }) => (
            <label key={key} className="c-check">
              <input
                type="checkbox"
                checked={methods.includes(key)}
                onChange={(e) =>
                  setMethods(e.target.checked ? [...methods, key] : methods.filter((m) => m !== key))
                }
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        <ErrorNote error={error} />
        <div className="c-row">
          <button type="submit" className="c-button" disabled={busy || !file}>
            {busy ? 'Checking…' : 'Check the rows'}
          </button>
        </div>
      </form>

      <h2 id="recent-imports">Recent imports</h2>
      {recent.isPending ? <Loading what="imports" /> : null}
      <ErrorNote error={recent.error} />
      {recent.data && recent.data.length === 0 ? <Empty>No {me.mode} imports yet.</Empty> : null}
      {recent.data && recent.data.length > 0 ? (
        <div className="c-table-wrap">
          <table aria-labelledby="recent-imports">
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Status</th>
                <th scope="col">Cases created</th>
                <th scope="col">Uploaded</th>
              </tr>
            </thead>
            <tbody>
              {recent.data.map((item) => (
                <tr key={item.id}>
                  <td>
                    <Link href={`/console/cases/import/${item.id}`}>{item.file_name}</Link>
                  </td>
                  <td>{item.status}</td>
                  <td>
                    {item.created_count.toLocaleString()} of {item.total_rows.toLocaleString()}
                  </td>
                  <td>{formatDate(item.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

'use client';

import { Fragment } from 'react';
import { api } from '../../_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '../../_lib/ui';
import { useLoad } from '../../_lib/use-load';

const URL_PATTERN = /(https?:\/\/[^\s<>"]+)/g;

/** Mail text with its links made clickable (text only: the mail's HTML is never rendered). */
function Linkified({ text }: { text: string }) {
  const parts = text.split(URL_PATTERN);
  return (
    <p className="c-pre">
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <a key={`${i}-${part}`} href={part}>
            {part}
          </a>
        ) : (
          <Fragment key={`${i}-${part.length}`}>{part}</Fragment>
        ),
      )}
    </p>
  );
}

export default function MailboxPage() {
  const mail = useLoad(() => api.mailbox.list.query(), 'mailbox');
  return (
    <>
      <h1>Dev mailbox</h1>
      <p className="c-muted">
        No mail server is configured (SMTP_URL is unset), so the service keeps the mail it sends here: mail to
        your team&apos;s members and to your cases&apos; subjects, newest first.
      </p>
      <div className="c-row">
        <button type="button" className="c-button c-secondary" onClick={mail.reload}>
          Refresh
        </button>
      </div>
      {mail.loading && !mail.data ? <Loading what="mail" /> : null}
      <ErrorNote error={mail.error} />
      {mail.data && mail.data.length === 0 ? <Empty>No mail yet.</Empty> : null}
      {mail.data?.map((m) => (
        <article key={m.id} className="c-mail" aria-labelledby={`mail-${m.id}`}>
          <h2 id={`mail-${m.id}`}>{m.subject}</h2>
          <p className="c-muted c-small">
            To {m.to} · {formatDate(m.created_at)}
          </p>
          <Linkified text={m.text} />
        </article>
      ))}
    </>
  );
}

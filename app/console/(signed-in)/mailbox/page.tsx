'use client';

import { useQuery } from '@tanstack/react-query';
import { Fragment } from 'react';
import { useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

const URL_PATTERN = /(https?:\/\/[^\s<>"]+)/g;

/** Mail text with its links made clickable (text only: the mail's HTML is never rendered). */
function Linkified({ text }: { text: string }) {
  const segments: Array<{ at: number; text: string; link: boolean }> = [];
  let at = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const start = match.index ?? 0;
    if (start > at) segments.push({ at, text: text.slice(at, start), link: false });
    segments.push({ at: start, text: match[0], link: true });
    at = start + match[0].length;
  }
  if (at < text.length) segments.push({ at, text: text.slice(at), link: false });
  return (
    <p className="c-pre">
      {segments.map((s) =>
        s.link ? (
          <a key={s.at} href={s.text}>
            {s.text}
          </a>
        ) : (
          <Fragment key={s.at}>{s.text}</Fragment>
        ),
      )}
    </p>
  );
}

export default function MailboxPage() {
  const queries = useQueryApi();
  const mail = useQuery(queries.mailbox.list.queryOptions());
  return (
    <>
      <h1>Dev mailbox</h1>
      <p className="c-muted">
        No mail server is configured (SMTP_URL is unset), so the service keeps the mail it sends here: mail to
        your team&apos;s members and to your cases&apos; subjects, newest first.
      </p>
      <div className="c-row">
        <button type="button" className="c-button c-secondary" onClick={() => mail.refetch()}>
          Refresh
        </button>
      </div>
      {mail.isPending ? <Loading what="mail" /> : null}
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

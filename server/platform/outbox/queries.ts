import { type SQL, sql } from 'drizzle-orm';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { events, mailOutbox } from '@/db/schema';
import { names } from '@/db/sql-names';

/**
 * The outbox's statements, run by every change that emits an event, each built once per process
 * (`reusableQuery`). Rows travel as one JSON parameter, so the text is the same for one event
 * (every case change) and for thousands (the expiry sweep).
 */

/** An event's row as `insertEventsFrom` reads it. */
export interface NewEventRow {
  id: string;
  team_id: string;
  livemode: boolean;
  type: string;
  data: Record<string, unknown>;
  case_id: string | null;
  body_sha256: string;
  created_at: string;
}

/**
 * Events written from a JSON array of `NewEventRow`, as a statement's body (or one CTE's of a
 * creation's writes). `json`, not `jsonb`, all the way: each event's `data` is stored as the text
 * it was sent in, the same text its deliveries carry.
 */
export function insertEventsFrom(rows: SQL): SQL {
  return sql`
    insert into ${events} (${names(events.id, events.teamId, events.livemode, events.type, events.data, events.caseId, events.bodySha256, events.createdAt)})
    select e.id, e.team_id, e.livemode, e.type, e.data, e.case_id, e.body_sha256, e.created_at
    from json_to_recordset(${rows})
      as e(id uuid, team_id uuid, livemode boolean, type text, data json, case_id uuid, body_sha256 text, created_at timestamptz)
  `;
}

/**
 * Any number of events in one statement, built once: the events travel as one JSON parameter, so
 * the text is the same for one event (every case change) and for thousands (the expiry sweep).
 */
export const insertEvents = reusableQuery((db) =>
  prepareSql(db, insertEventsFrom(sql`${sql.placeholder('events')}::json`), 'insert_events'),
);

/** A mail's row as `insertMailsFrom` reads it. */
export interface NewMailRow {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  language: string | null;
  livemode: boolean;
  case_id: string | null;
}

/** Mails queued in the outbox (the worker sends them) from a JSON array of `NewMailRow`. */
export function insertMailsFrom(rows: SQL): SQL {
  return sql`
    insert into ${mailOutbox} (${names(mailOutbox.id, mailOutbox.to, mailOutbox.subject, mailOutbox.text, mailOutbox.html, mailOutbox.language, mailOutbox.livemode, mailOutbox.caseId)})
    select m.id, m."to", m.subject, m."text", m.html, m.language, m.livemode, m.case_id
    from jsonb_to_recordset(${rows})
      as m(id uuid, "to" text, subject text, "text" text, html text, language text, livemode boolean, case_id uuid)
  `;
}

/** Any number of mails in one statement, built once (one mail and a batch's share the text). */
export const insertMails = reusableQuery((db) =>
  prepareSql(db, insertMailsFrom(sql`${sql.placeholder('mails')}::jsonb`), 'insert_mails'),
);

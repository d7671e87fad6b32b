import { sql } from 'drizzle-orm';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { events, mailOutbox } from '@/db/schema';
import { names } from '@/db/sql-names';

/**
 * The outbox's statements, run by every change that emits an event, each built once per process
 * (`reusableQuery`). Rows travel as one JSON parameter, so the text is the same for one event
 * (every case change) and for thousands (the expiry sweep).
 */

/**
 * Any number of events in one statement, built once: the events travel as one JSON parameter, so
 * the text is the same for one event (every case change) and for thousands (the expiry sweep).
 * `json`, not `jsonb`, all the way: each event's `data` is stored as the text it was sent in, the
 * same text its deliveries carry.
 */
export const insertEvents = reusableQuery((db) =>
  prepareSql(
    db,
    sql`
      insert into ${events} (${names(events.id, events.teamId, events.livemode, events.type, events.data, events.caseId, events.bodySha256, events.createdAt)})
      select e.id, e.team_id, e.livemode, e.type, e.data, e.case_id, e.body_sha256, e.created_at
      from json_to_recordset(${sql.placeholder('events')}::json)
        as e(id uuid, team_id uuid, livemode boolean, type text, data json, case_id uuid, body_sha256 text, created_at timestamptz)
    `,
    'insert_events',
  ),
);

/** A mail for the outbox, queued (the worker sends it). */
export const insertMail = reusableQuery((db) =>
  db
    .insert(mailOutbox)
    .values({
      id: sql.placeholder('id'),
      to: sql.placeholder('to'),
      subject: sql.placeholder('subject'),
      text: sql.placeholder('text'),
      html: sql.placeholder('html'),
      language: sql.placeholder('language'),
      livemode: sql.placeholder('livemode'),
      caseId: sql.placeholder('caseId'),
    })
    .prepare('insert_mail'),
);

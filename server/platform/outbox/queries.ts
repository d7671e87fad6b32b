import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { events, mailOutbox, webhookDeliveries, webhookEndpoints } from '@/db/schema';
import { name, names, tableAs } from '@/db/sql-names';

const endpoint = alias(webhookEndpoints, 'ep');

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
      insert into ${events} (${names(events.id, events.teamId, events.livemode, events.type, events.data, events.caseId, events.createdAt)})
      select e.id, e.team_id, e.livemode, e.type, e.data, e.case_id, e.created_at
      from json_to_recordset(${sql.placeholder('events')}::json)
        as e(id uuid, team_id uuid, livemode boolean, type text, data json, case_id uuid, created_at timestamptz)
    `,
    'insert_events',
  ),
);

/**
 * One delivery per endpoint of the event's team and mode subscribed to its type; returns the deliveries whose endpoint
 * is active (the ones to attempt now). An endpoint the service disabled still gets its deliveries,
 * held as pending; one its team switched off gets none.
 */
export const insertDeliveries = reusableQuery((db) =>
  prepareSql<{ id: string }>(
    db,
    sql`
      with inserted as (
        insert into ${webhookDeliveries} (${names(
          webhookDeliveries.teamId,
          webhookDeliveries.livemode,
          webhookDeliveries.endpointId,
          webhookDeliveries.eventId,
          webhookDeliveries.eventType,
          webhookDeliveries.body,
          webhookDeliveries.nextAttemptAt,
          webhookDeliveries.createdAt,
        )})
        select e.team_id, e.livemode, ${endpoint.id}, e.event_id, e.type, e.body, e.created_at, e.created_at
        from jsonb_to_recordset(${sql.placeholder('events')}::jsonb)
          as e(event_id uuid, team_id uuid, livemode boolean, type text, body text, created_at timestamptz)
        join ${tableAs(webhookEndpoints, endpoint)}
          on ${endpoint.teamId} = e.team_id
         and ${endpoint.livemode} = e.livemode
         and e.type = any(${endpoint.events})
         and (${endpoint.isActive} or ${endpoint.disabledAt} is not null)
        returning ${names(webhookDeliveries.id, webhookDeliveries.endpointId)}
      )
      select inserted.${name(webhookDeliveries.id)} from inserted
      join ${tableAs(webhookEndpoints, endpoint)} on ${endpoint.id} = inserted.${name(webhookDeliveries.endpointId)}
      where ${endpoint.isActive}
    `,
    'fan_out_events',
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
      livemode: sql.placeholder('livemode'),
      caseId: sql.placeholder('caseId'),
    })
    .prepare('insert_mail'),
);

import { sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { QUEUES } from '@/jobs/catalog';
import { enqueueJobs } from '@/jobs/enqueue';
import type { EventEnvelope } from '../events/record-event';

/** The exact bytes every attempt of a delivery sends (and signs). */
export function deliveryBody(envelope: EventEnvelope): string {
  return JSON.stringify(envelope);
}

const fanOut = reusableQuery((db) =>
  prepareSql<{ id: string }>(
    db,
    sql`
      with inserted as (
        insert into webhook_deliveries (team_id, endpoint_id, event_id, event_type, body, next_attempt_at, created_at)
        select e.team_id, ep.id, e.event_id, e.type, e.body, e.created_at, e.created_at
        from jsonb_to_recordset(${sql.placeholder('events')}::jsonb)
          as e(event_id uuid, team_id uuid, type text, body text, created_at timestamptz)
        join webhook_endpoints ep
          on ep.team_id = e.team_id
         and e.type = any(ep.events)
         and (ep.is_active or ep.disabled_at is not null)
        returning id, endpoint_id
      )
      select inserted.id from inserted
      join webhook_endpoints ep on ep.id = inserted.endpoint_id
      where ep.is_active
    `,
    'fan_out_events',
  ),
);

/**
 * One delivery per endpoint subscribed to each event's type, and a job for each delivery whose
 * endpoint is active, all in the event's transaction. An endpoint the service disabled still gets
 * its deliveries, held as `pending` until reactivation (nothing is lost); an endpoint its team
 * switched off (`is_active` false without `disabled_at`) gets none.
 */
export async function fanOutEvents(
  tx: Tx,
  recorded: Array<{ id: string; teamId: string; envelope: EventEnvelope }>,
): Promise<void> {
  if (recorded.length === 0) return;
  const rows = recorded.map((event) => ({
    event_id: event.id,
    team_id: event.teamId,
    type: event.envelope.type,
    body: deliveryBody(event.envelope),
    created_at: event.envelope.created_at,
  }));
  const created = await fanOut(tx).execute({ events: JSON.stringify(rows) });
  await enqueueJobs(
    tx,
    QUEUES.webhookDeliver,
    created.map((row) => ({ data: { deliveryId: row.id } })),
  );
}

import { sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { events } from '@/db/schema';
import { eventWireId, randomUUID } from '../lib/ids';
import { fanOutEvents } from '../webhooks/fan-out';

export const CASE_EVENT_TYPES = [
  'case.created',
  'case.closed',
  'case.failed',
  'case.expired',
  'verification.step_completed',
] as const;

export type CaseEventType = (typeof CASE_EVENT_TYPES)[number];
export type EventType = CaseEventType | 'ping';

export interface EventEnvelope {
  id: string;
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
}

export interface RecordedEvent {
  id: string;
  teamId: string;
  envelope: EventEnvelope;
}

export interface EventInput {
  teamId: string;
  type: EventType;
  data: Record<string, unknown>;
  caseId?: string;
  now: Date;
}

/**
 * Writes an event to the outbox. Takes a transaction on purpose: an event exists exactly when the
 * change that caused it committed. Its webhook deliveries (one per subscribed endpoint) and their
 * jobs are created in the same transaction, so nothing is lost if the process dies after commit.
 */
export async function recordEvent(tx: Tx, input: EventInput): Promise<RecordedEvent> {
  const [recorded] = await recordEvents(tx, [input]);
  if (!recorded) throw new Error('event insert returned nothing');
  return recorded;
}

/**
 * Any number of events in one statement, built once: the events travel as one JSON parameter, so
 * the text is the same for one event (every case change) and for thousands (the expiry sweep).
 */
const insertEvents = reusableQuery((db) =>
  prepareSql(
    db,
    sql`
      insert into ${events} (id, team_id, type, data, case_id, created_at)
      select e.id, e.team_id, e.type, e.data, e.case_id, e.created_at
      from jsonb_to_recordset(${sql.placeholder('events')}::jsonb)
        as e(id uuid, team_id uuid, type text, data jsonb, case_id uuid, created_at timestamptz)
    `,
    'insert_events',
  ),
);

/** Many events in one statement (the expiry sweep records thousands at a time). */
export async function recordEvents(tx: Tx, inputs: EventInput[]): Promise<RecordedEvent[]> {
  if (inputs.length === 0) return [];
  const recorded: RecordedEvent[] = inputs.map((input) => {
    const id = randomUUID();
    return {
      id,
      teamId: input.teamId,
      envelope: {
        id: eventWireId(id),
        type: input.type,
        created_at: input.now.toISOString(),
        data: input.data,
      },
    };
  });
  // Sent together (pipelined), in this order (hence `.execute()`: a builder would only be sent
  // when awaited): the deliveries' insert runs after the events' and sees them.
  await Promise.all([
    insertEvents(tx).execute({
      events: JSON.stringify(
        inputs.map((input, index) => ({
          id: recorded[index]?.id,
          team_id: input.teamId,
          type: input.type,
          data: input.data,
          case_id: input.caseId ?? null,
          created_at: input.now.toISOString(),
        })),
      ),
    }),
    // `ping` reaches an endpoint only through its test operation, never by subscription.
    fanOutEvents(
      tx,
      recorded.filter((event) => event.envelope.type !== 'ping'),
    ),
  ]);
  return recorded;
}

/** `data` of every `case.*` event (decisions.md). */
export function caseEventData(c: {
  id: string;
  publicId: string;
  subjectEmail: string;
  status: string;
  createdAt: Date;
  failureReason?: string | null;
}): Record<string, unknown> {
  return {
    case_id: c.id,
    public_id: c.publicId,
    subject_email: c.subjectEmail,
    status: c.status,
    created_at: c.createdAt.toISOString(),
    ...(c.status === 'failed' ? { failure_reason: c.failureReason ?? null } : {}),
  };
}

import type { Tx } from '@/db/client';
import { events } from '@/db/schema';
import { eventWireId } from '../lib/ids';

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
  envelope: EventEnvelope;
}

/**
 * Writes an event to the outbox. Takes a transaction on purpose: an event exists exactly when the
 * change that caused it committed.
 */
export async function recordEvent(
  tx: Tx,
  input: {
    teamId: string;
    type: EventType;
    data: Record<string, unknown>;
    caseId?: string;
    now: Date;
  },
): Promise<RecordedEvent> {
  const [row] = await tx
    .insert(events)
    .values({
      teamId: input.teamId,
      type: input.type,
      data: input.data,
      caseId: input.caseId ?? null,
      createdAt: input.now,
    })
    .returning({ id: events.id });
  if (!row) throw new Error('event insert returned nothing');
  return {
    id: row.id,
    envelope: {
      id: eventWireId(row.id),
      type: input.type,
      created_at: input.now.toISOString(),
      data: input.data,
    },
  };
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

import { createHash } from 'node:crypto';
import { afterCommit } from '@/db/after-commit';
import type { Queryable, Tx } from '@/db/client';
import { pipelined } from '@/db/pipeline';
import type { DataScope } from '@/server/platform/data-scope';
import { eventWireId, newRowId } from '@/server/platform/ids';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { recordCasesCreated } from '@/server/platform/metrics/instruments';
import { storableJson } from '@/server/platform/storable-text';
import { createDeliveries, type FanOutRow } from './delivery-state';
import { insertEvents, type NewEventRow } from './queries';

export const CASE_EVENT_TYPES = [
  'case.created',
  'case.closed',
  'case.failed',
  'case.expired',
  'verification.step_completed',
  'case.redacted',
] as const;

export type CaseEventType = (typeof CASE_EVENT_TYPES)[number];

/** A subject's passkey saved at the end of a case, or revoked by the team. */
export const PASSKEY_EVENT_TYPES = ['passkey.enrolled', 'passkey.revoked'] as const;

/** What a webhook endpoint may subscribe to (`ping` reaches one only through its test). */
export const SUBSCRIBABLE_EVENT_TYPES = [...CASE_EVENT_TYPES, ...PASSKEY_EVENT_TYPES] as const;
export type EventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number] | 'ping';

export interface EventEnvelope {
  id: string;
  type: EventType;
  created_at: string;
  /** False for a test-mode event (a `vouch_test_…` key's case or endpoint). */
  livemode: boolean;
  data: Record<string, unknown>;
}

export interface RecordedEvent {
  id: string;
  scope: DataScope;
  envelope: EventEnvelope;
  /** The envelope as every delivery sends it (deliveryBody). */
  body: string;
}

export interface EventInput {
  /** The team and mode of what the event is about: its deliveries go to that mode's endpoints. */
  scope: DataScope;
  type: EventType;
  data: Record<string, unknown>;
  caseId?: string;
  now: Date;
}

/**
 * An event as it travels: in every delivery's body and from the events API. Built in this one
 * place, so both carry the same fields in the same order (and `data` as stored, `json` keeping its
 * text), hence the same bytes.
 */
export function eventEnvelope(event: {
  id: string;
  type: EventType;
  createdAt: Date;
  livemode: boolean;
  data: Record<string, unknown>;
}): EventEnvelope {
  return {
    id: eventWireId(event.id),
    type: event.type,
    created_at: event.createdAt.toISOString(),
    livemode: event.livemode,
    data: event.data,
  };
}

/** The exact bytes every attempt of a delivery sends (and signs). */
export function deliveryBody(envelope: EventEnvelope): string {
  return JSON.stringify(envelope);
}

/** SHA-256, hex, of a body: how an evidence record names the body an event was delivered with. */
export function bodyDigest(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * One delivery per endpoint of the event's team and mode subscribed to its type, and a job for each delivery whose
 * endpoint is active, all in the event's transaction. An endpoint the service disabled still gets
 * its deliveries, held as `pending` until reactivation (nothing is lost); an endpoint its team
 * switched off (`is_active` false without `disabled_at`) gets none.
 */
async function fanOutEvents(tx: Tx, jobs: JobProducer, rows: FanOutRow[]): Promise<void> {
  if (rows.length === 0) return;
  const created = await createDeliveries(tx).execute({ events: JSON.stringify(rows) });
  await queueAttempts(tx, jobs, created);
}

/** The first attempt's job of each delivery fanned out to an active endpoint. */
export async function queueAttempts(tx: Tx, jobs: JobProducer, deliveries: ReadonlyArray<{ id: string }>) {
  if (deliveries.length > 0)
    await jobs.webhookAttempts(
      tx,
      deliveries.map((row) => ({ deliveryId: row.id })),
    );
}

/**
 * Writes an event to the outbox. Takes a transaction on purpose: an event exists exactly when the
 * change that caused it committed. Its webhook deliveries (one per subscribed endpoint) and their
 * jobs are created in the same transaction, so nothing is lost if the process dies after commit.
 */
export async function recordEvent(tx: Tx, jobs: JobProducer, input: EventInput): Promise<RecordedEvent> {
  const [recorded] = await recordEvents(tx, jobs, [input]);
  if (!recorded) throw new Error('event insert returned nothing');
  return recorded;
}

/**
 * Many events in one statement (the expiry sweep records thousands at a time), with their
 * deliveries in the same round trip.
 */
export async function recordEvents(
  tx: Tx,
  jobs: JobProducer,
  inputs: EventInput[],
): Promise<RecordedEvent[]> {
  if (inputs.length === 0) return [];
  const planned = plannedEvents(inputs);
  // Sent together, in this order: the deliveries' insert runs after the events' and sees them.
  await pipelined(
    () => insertEvents(tx).execute({ events: JSON.stringify(planned.events) }),
    () => fanOutEvents(tx, jobs, planned.fanOut),
  );
  countCreations(tx, planned.recorded);
  return planned.recorded;
}

/**
 * Events as the outbox writes them (insertEventsFrom) and fans them out (fanOutFrom), with their
 * ids chosen here. Each event's data is made storable first (server/platform/storable-text.ts): it
 * holds outside text (subjects' addresses, names from an identity provider), and one `\u0000` or
 * lone surrogate would fail the statement, every event in it and the change that caused them. The
 * envelope is built from the storable data, so the events API and every delivery carry the same
 * bytes. Whoever writes them calls `countCreations` in the same transaction.
 */
export function plannedEvents(inputs: EventInput[]): {
  recorded: RecordedEvent[];
  events: NewEventRow[];
  fanOut: FanOutRow[];
} {
  const recorded: RecordedEvent[] = inputs.map((input) => {
    const id = newRowId();
    const envelope = eventEnvelope({
      id,
      type: input.type,
      createdAt: input.now,
      livemode: input.scope.livemode,
      data: storableJson(input.data),
    });
    return { id, scope: input.scope, envelope, body: deliveryBody(envelope) };
  });
  return {
    recorded,
    events: recorded.map((event, index) => ({
      id: event.id,
      team_id: event.scope.teamId,
      livemode: event.scope.livemode,
      type: event.envelope.type,
      data: event.envelope.data,
      case_id: inputs[index]?.caseId ?? null,
      body_sha256: bodyDigest(event.body),
      created_at: event.envelope.created_at,
    })),
    // `ping` reaches an endpoint only through its test operation, never by subscription.
    fanOut: recorded
      .filter((event) => event.envelope.type !== 'ping')
      .map((event) => ({
        event_id: event.id,
        team_id: event.scope.teamId,
        livemode: event.scope.livemode,
        type: event.envelope.type,
        body: event.body,
        created_at: event.envelope.created_at,
      })),
  };
}

/**
 * Every case's creation records its `case.created` through the outbox, so this is where creations
 * are counted, once they have committed.
 */
export function countCreations(db: Queryable, recorded: readonly RecordedEvent[]): void {
  const created = recorded.filter((event) => event.envelope.type === 'case.created');
  if (created.length === 0) return;
  // In a transaction, once it commits; a statement of its own has committed already.
  afterCommit(db, () => {
    const live = created.filter((event) => event.envelope.livemode).length;
    if (live > 0) recordCasesCreated(true, live);
    if (created.length > live) recordCasesCreated(false, created.length - live);
  });
}

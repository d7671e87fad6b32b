import { index, json, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, livemode } from './columns';
import { teams } from './teams';

/**
 * The event outbox. A row is written in the same transaction as the change that causes it; the
 * wire id is `evt_` + this uuid.
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    type: text('type').notNull(),
    /**
     * `json`, not `jsonb`: PostgreSQL keeps json text as it was written, so the events API returns
     * `data` byte for byte as the deliveries sent it (jsonb reorders keys).
     */
    data: json('data').$type<Record<string, unknown>>().notNull(),
    /** The case the event is about, for a case's timeline; null for `ping`. */
    caseId: uuid('case_id'),
    /**
     * SHA-256 (hex) of the event's body as every delivery sends it (and the events API serves it),
     * taken when it is recorded: an evidence record cites it, and it keeps naming what was sent
     * after redaction has rewritten `data`. Null for events recorded before it existed.
     */
    bodySha256: text('body_sha256'),
    createdAt: createdAt(),
  },
  (t) => [
    // The events API walks these newest first, by (created_at, id), like every list.
    index('events_team_created_idx').on(t.teamId, t.livemode, t.createdAt.desc(), t.id.desc()),
    index('events_team_type_created_idx').on(t.teamId, t.livemode, t.type, t.createdAt.desc(), t.id.desc()),
    index('events_case_idx').on(t.caseId),
  ],
);

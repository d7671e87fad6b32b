import { boolean, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Every timestamp is stored with its time zone and read as a JS Date (UTC on the wire). */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const createdAt = () => timestamptz('created_at').notNull().defaultNow();

/**
 * Which mode a row belongs to: live (`true`) or test (the `vouch_test_…` keys' cases, events,
 * endpoints and deliveries). Every query of that data filters on it beside the team, and the
 * indexes lead with (team_id, livemode), so a mode never sees or scans the other's rows.
 */
export const livemode = () => boolean('livemode').notNull().default(true);

export const primaryUuid = () => uuid('id').primaryKey().defaultRandom();

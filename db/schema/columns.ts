import { timestamp, uuid } from 'drizzle-orm/pg-core';

/** Every timestamp is stored with its time zone and read as a JS Date (UTC on the wire). */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const createdAt = () => timestamptz('created_at').notNull().defaultNow();

export const primaryUuid = () => uuid('id').primaryKey().defaultRandom();

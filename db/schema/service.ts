import { sql } from 'drizzle-orm';
import { boolean, check, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns';

/**
 * The URL the service's web processes serve (BASE_URL, or http://localhost:PORT), which each
 * records at start-up, the last one winning. The operator CLI runs in another shell, which knows
 * neither the service's PORT nor its BASE_URL, and takes the links it prints from here.
 */
export const servedBaseUrl = pgTable(
  'served_base_url',
  {
    // One row: its key can only be true.
    singleton: boolean('singleton').primaryKey().default(true),
    baseUrl: text('base_url').notNull(),
    recordedAt: timestamptz('recorded_at').notNull(),
  },
  (t) => [check('served_base_url_one_row', sql`${t.singleton}`)],
);

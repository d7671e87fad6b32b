import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit generate` uses this file; it compares the schema with the committed snapshots
// and needs no database.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});

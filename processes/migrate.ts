/**
 * The launcher's one-shot migration, in a process of its own: the launcher is a supervisor that
 * runs as long as the service, and never loads the database driver and the schema for a few
 * seconds' work. Migrates DATABASE_URL and exits 0, or says why it could not and exits 1.
 */
import { migrateDatabase } from '@/db/client';
import { checkedConfig, usingDatabase } from './process-kit';

const config = checkedConfig();
if (!config.DATABASE_URL) throw new Error('the launcher passes DATABASE_URL to the migration');
await usingDatabase(config, migrateDatabase(config.DATABASE_URL));
process.exit(0);

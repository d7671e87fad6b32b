/**
 * The launcher's one-shot migration, in a process of its own: the launcher is a supervisor that
 * runs as long as the service, and never loads the database driver and the schema for a few
 * seconds' work. Migrates DATABASE_URL (DIRECT_DATABASE_URL when set: never through a transaction
 * pooler) and exits 0, or says why it could not and exits 1.
 */
import { migrateDatabase } from '@/db/client';
import { exitWhenIdle } from './exit-when-idle';
import { checkedConfig, usingDatabase } from './process-kit';

const config = await checkedConfig();
if (!config.DATABASE_URL) throw new Error('the launcher passes DATABASE_URL to the migration');
await usingDatabase(config, migrateDatabase(config.DIRECT_DATABASE_URL ?? config.DATABASE_URL));
await exitWhenIdle(0);

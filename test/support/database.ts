import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '@/db/client';

/** The application_name of the tests' own connections to their databases. */
export const TEST_CONNECTIONS = 'vouch-tests';

export interface TestDatabase extends Database {
  url: string;
  name: string;
}

/** A fresh copy of the migrated template: every test file gets a database of its own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `vouch_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  const parsed = new URL(adminUrl);
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  // Named, so that a test counting the service's connections to the database can leave its own out.
  const database = connectDatabase(url, { max: 10, settings: { application_name: TEST_CONNECTIONS } });
  return {
    ...database,
    url,
    name,
    close: async () => {
      await database.close();
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await dropper.end();
    },
  };
}

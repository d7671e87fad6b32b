import type { Db } from '@/db/client';
import { servedBaseUrl } from '@/db/schema';

/**
 * Records the URL this web process serves. Every web process does at start-up and the last one
 * wins: processes sharing a database serve one service, so they record the same URL, and a
 * service started again on another port or BASE_URL replaces what it recorded before.
 */
export async function recordServedBaseUrl(db: Db, baseUrl: string, now: Date): Promise<void> {
  await db
    .insert(servedBaseUrl)
    .values({ baseUrl, recordedAt: now })
    .onConflictDoUpdate({ target: servedBaseUrl.singleton, set: { baseUrl, recordedAt: now } });
}

/** The URL the service's web processes last recorded, if one has run on this database. */
export async function lastServedBaseUrl(db: Db): Promise<string | undefined> {
  const [row] = await db.select({ baseUrl: servedBaseUrl.baseUrl }).from(servedBaseUrl);
  return row?.baseUrl;
}

import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { appSecrets } from '@/db/schema';
import { keyEncryptionKey } from './signing-keys';

const kekByDatabase = new WeakMap<Db, Promise<Uint8Array>>();

/**
 * The key the signing keys' private halves are encrypted under: derived from KEYS_SECRET,
 * or in development (production refuses to start without the setting) from a secret generated once
 * and kept in the database, so every process sharing it agrees. Derived once per process.
 */
export function signingKeyEncryptionKey(db: Db, configured: string | undefined): Promise<Uint8Array> {
  if (configured) return Promise.resolve(keyEncryptionKey(configured));
  let found = kekByDatabase.get(db);
  if (!found) {
    found = (async () => {
      await db
        .insert(appSecrets)
        .values({ name: 'signing_key_secret', value: randomBytes(32).toString('base64url') })
        .onConflictDoNothing();
      const [row] = await db.select().from(appSecrets).where(eq(appSecrets.name, 'signing_key_secret'));
      if (!row) throw new Error('signing key secret missing after insert');
      return keyEncryptionKey(row.value);
    })();
    // A failed read (the database out of reach) is not kept: the next call tries again.
    found.catch(() => kekByDatabase.delete(db));
    kekByDatabase.set(db, found);
  }
  return found;
}

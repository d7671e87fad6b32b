import { and, isNull, lt, ne, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { oidcFlows } from '@/db/schema';

/** How long a flow keeps what its pushed request said (the names, the address, the login_hint). */
export const FLOW_REQUEST_RETENTION_DAYS = 1;

/**
 * The daily clean-up of identity-provider flows: a pushed request never brought to authorize is
 * deleted, and a flow that opened a case forgets what its request said (the case keeps what it
 * needs: its external_ref, the names on its ID step until redaction), keeping which client
 * opened which case. Flows are a day past their 40 minutes by then.
 */
export async function purgeFlows(db: Db, before: Date): Promise<{ deleted: number; forgotten: number }> {
  const deleted = await db
    .delete(oidcFlows)
    .where(and(isNull(oidcFlows.caseId), lt(oidcFlows.createdAt, before)))
    .returning({ id: oidcFlows.id });
  const forgotten = await db
    .update(oidcFlows)
    .set({ request: {} })
    .where(and(lt(oidcFlows.createdAt, before), ne(oidcFlows.request, sql`'{}'::jsonb`)))
    .returning({ id: oidcFlows.id });
  return { deleted: deleted.length, forgotten: forgotten.length };
}

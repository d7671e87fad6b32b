import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { caseSteps } from '@/db/schema';
import type { CaseRecord } from '@/server/cases/case-record';

export function stepOf(record: CaseRecord, method: VerificationMethod) {
  return record.steps.find((s) => s.method === method);
}

export function settingString(record: CaseRecord, method: VerificationMethod, key: string): string | null {
  const value = stepOf(record, method)?.settings[key];
  return typeof value === 'string' ? value : null;
}

/** Merges keys into a step's settings (a null value removes the key). */
export async function mergeStepSettings(
  db: Queryable,
  caseId: string,
  method: VerificationMethod,
  values: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const removed = Object.keys(values).filter((k) => values[k] === null);
  const kept = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
  let merged = sql`${caseSteps.settings} || ${JSON.stringify(kept)}::jsonb`;
  for (const key of removed) merged = sql`(${merged}) - ${key}::text`;
  await db
    .update(caseSteps)
    .set({ settings: merged, updatedAt: now })
    .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, method)));
}

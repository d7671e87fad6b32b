import type { Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { redactedEvidence } from '@/db/schema';
import { keyedHash } from '@/server/audit/chain-hash';
import type { CaseRecord } from '@/server/cases/case-record';
import { teamEvidenceKey } from '@/server/teams/team-secrets';
import { MODULE_BY_KEY } from '@/server/verification/methods/modules';
import { stepEvidence } from './evidence-record';
import type { RedactedEvidence } from './record-format';

/**
 * Keeps what the case's evidence record cites that redaction is about to erase, each personal
 * value as its HMAC under the team's evidence key: records issued after redaction still say what
 * was checked, provably to whoever holds the value and the key, and to nobody else (an HMAC of four
 * digits cannot be searched without the key). Call it in the redaction's transaction, before the
 * values go.
 */
export async function keepRedactedEvidence(tx: Tx, record: CaseRecord): Promise<void> {
  const key = await teamEvidenceKey(tx, record.teamId);
  const keyed = (value: string | null) => (value === null ? null : keyedHash(key, value));
  const steps = Object.fromEntries(
    Object.entries(stepEvidence(record)).map(([method, reference]) => {
      const personal = MODULE_BY_KEY[method as VerificationMethod].evidence.personal;
      return [
        method,
        Object.fromEntries(
          Object.entries(reference).map(([name, value]) => [
            name,
            personal.includes(name) ? keyed(value) : value,
          ]),
        ),
      ];
    }),
  );
  const evidence: RedactedEvidence = {
    subject_email: keyedHash(key, record.subjectEmail),
    subject_name: keyed(record.subjectName),
    external_ref: keyed(record.externalRef),
    steps,
  };
  await tx.insert(redactedEvidence).values({ caseId: record.id, evidence }).onConflictDoNothing();
}

import type { Db } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { signFlattened } from '@/server/signing/sign';
import { currentSigningKey } from '@/server/signing/signing-keys';
import { readEvidenceRecord } from './evidence-record';
import { EVIDENCE_TYP, type EvidenceRecord, type SignedEvidence } from './record-format';

export interface IssuedEvidence {
  record: EvidenceRecord;
  jws: SignedEvidence;
}

/**
 * The case's evidence record, read now and signed with the service's current EdDSA key, whose id
 * the record names inside as well as in its header. `issuer` is the service's BASE_URL.
 */
export async function issueEvidenceRecord(
  db: Db,
  input: { record: CaseRecord; issuer: string; kek: Uint8Array; now: Date },
): Promise<IssuedEvidence> {
  const key = await currentSigningKey(db, 'EdDSA', input.kek, input.now);
  const record = await readEvidenceRecord(
    db,
    input.record,
    { issuer: input.issuer, issuedAt: input.now, kid: key.kid },
    input.now,
  );
  const jws = await signFlattened(key, EVIDENCE_TYP, record);
  // signFlattened always sets the protected header: this only narrows jose's type.
  if (jws.protected === undefined) throw new Error('a flattened JWS without its protected header');
  return { record, jws: { payload: jws.payload, protected: jws.protected, signature: jws.signature } };
}

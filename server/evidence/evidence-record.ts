import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { auditChainHeads, auditLog, events, redactedEvidence } from '@/db/schema';
import { caseEndedAt } from '@/server/cases/case-ended-at';
import { type CaseRecord, effectiveStatus } from '@/server/cases/case-record';
import { flowOfCase } from '@/server/oidc/flows';
import { eventWireId } from '@/server/platform/ids';
import {
  bodyDigest,
  deliveryBody,
  type EventType,
  eventEnvelope,
} from '@/server/platform/outbox/record-events';
import { MODULE_BY_KEY } from '@/server/verification/methods/modules';
import { METHODS } from '@/server/verification/methods/registry';
import {
  EVIDENCE_DOWNLOADED,
  EVIDENCE_RECORD_TYPE,
  EVIDENCE_RECORD_VERSION,
  type EvidenceAuditEntry,
  type EvidenceRecord,
  type RedactedEvidence,
} from './record-format';

/*
 * A case's evidence record (decisions: "Evidence records and signing keys"): what was checked,
 * when, decided by whom, with the events sent about it and its audit entries as the team's
 * hash chain sealed them. Built when asked for and signed as it leaves (sign-evidence.ts); an
 * auditor verifies it with the published keys alone (verify-evidence.ts).
 *
 * Two records of an ended case differ only in `issued_at` and `kid`: nothing in it depends on the
 * moment it is asked for (downloads, audited too, are left out: record-format.ts).
 */

/** The record's signing details, known once the key that will sign it is. */
export interface RecordIssue {
  issuer: string;
  issuedAt: Date;
  kid: string;
}

/** Each requested step's evidence reference, as it reads from the case now. */
export function stepEvidence(record: CaseRecord): Record<string, Record<string, string | null>> {
  return Object.fromEntries(
    record.steps.map((step) => [step.method, MODULE_BY_KEY[step.method].evidence.read(record, step)]),
  );
}

async function caseEvents(db: Queryable, record: CaseRecord) {
  const rows = await db
    .select()
    .from(events)
    .where(and(eq(events.caseId, record.id), eq(events.teamId, record.teamId)))
    .orderBy(asc(events.createdAt), asc(events.id));
  return rows.map((row) => ({
    id: eventWireId(row.id),
    type: row.type,
    created_at: row.createdAt.toISOString(),
    createdAt: row.createdAt,
    // An event recorded before digests were kept: its body as stored is the body delivered until
    // redaction rewrote it; after that nothing kept says.
    body_sha256:
      row.bodySha256 ??
      (record.redactedAt
        ? null
        : bodyDigest(deliveryBody(eventEnvelope({ ...row, type: row.type as EventType })))),
  }));
}

async function caseAudit(db: Queryable, record: CaseRecord): Promise<EvidenceRecord['audit']> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.teamId, record.teamId),
        eq(auditLog.target, record.id),
        ne(auditLog.action, EVIDENCE_DOWNLOADED),
      ),
    )
    .orderBy(sql`${auditLog.chainSeq} asc nulls last`, asc(auditLog.createdAt), asc(auditLog.id));
  const entries: EvidenceAuditEntry[] = [];
  const pending: EvidenceRecord['audit']['pending'] = [];
  for (const row of rows) {
    if (row.chainSeq !== null && row.hash && row.sealed) {
      entries.push({ seq: row.chainSeq, prev_hash: row.prevHash, hash: row.hash, entry: row.sealed });
    } else {
      pending.push({ id: row.id, action: row.action, at: row.createdAt.toISOString() });
    }
  }
  let sealedThrough = entries.at(-1)?.seq ?? null;
  if (pending.length > 0) {
    const [head] = await db
      .select({ seq: auditChainHeads.seq })
      .from(auditChainHeads)
      .where(eq(auditChainHeads.teamId, record.teamId));
    sealedThrough = head?.seq ?? null;
  }
  return { sealed_through: sealedThrough, entries, pending };
}

async function keptAtRedaction(db: Queryable, caseId: string): Promise<RedactedEvidence | null> {
  const [row] = await db
    .select({ evidence: redactedEvidence.evidence })
    .from(redactedEvidence)
    .where(eq(redactedEvidence.caseId, caseId));
  return (row?.evidence as RedactedEvidence | undefined) ?? null;
}

/**
 * The record of `record` (a case of the asking team and mode: the caller has scoped it) as it
 * stands at `now`. A redacted case's personal values come from what redaction kept, as HMACs.
 */
export async function readEvidenceRecord(
  db: Queryable,
  record: CaseRecord,
  issue: RecordIssue,
  now: Date,
): Promise<EvidenceRecord> {
  const [eventRows, audit, redacted, flow] = await Promise.all([
    caseEvents(db, record),
    caseAudit(db, record),
    record.redactedAt ? keptAtRedaction(db, record.id) : null,
    flowOfCase(db, record.id),
  ]);
  const status = effectiveStatus(record, now);
  const live = stepEvidence(record);
  const ordered = METHODS.flatMap(({ key }) => record.steps.filter((step) => step.method === key));
  return {
    type: EVIDENCE_RECORD_TYPE,
    version: EVIDENCE_RECORD_VERSION,
    issuer: issue.issuer,
    issued_at: issue.issuedAt.toISOString(),
    kid: issue.kid,
    provisional: status === 'open',
    case: {
      id: record.id,
      public_id: record.publicId,
      team_id: record.teamId,
      livemode: record.livemode,
      status,
      failure_reason: record.failureReason,
      created_at: record.createdAt.toISOString(),
      ended_at: caseEndedAt(record, now, eventRows)?.toISOString() ?? null,
      redacted_at: record.redactedAt?.toISOString() ?? null,
      methods: ordered.map((step) => step.method),
      // A redacted case kept its address as an HMAC (a case redacted before records existed: the
      // placeholder it holds, which is no personal value).
      subject_email: redacted?.subject_email ?? record.subjectEmail,
      subject_name: record.redactedAt ? (redacted?.subject_name ?? null) : record.subjectName,
      external_ref: record.redactedAt ? (redacted?.external_ref ?? null) : record.externalRef,
      identity_provider_client: flow?.clientId ?? null,
    },
    steps: ordered.map((step) => ({
      method: step.method,
      outcome: step.state,
      decided_at: (step.verifiedAt ?? step.failedAt)?.toISOString() ?? null,
      attempts: step.failedAttempts,
      evidence: record.redactedAt
        ? (redacted?.steps[step.method] ?? nullified(live[step.method] ?? {}))
        : (live[step.method] ?? {}),
    })),
    events: eventRows.map(({ createdAt: _createdAt, ...event }) => event),
    audit,
  };
}

/** A reference's fields with nothing in them: a case redacted before redaction kept references. */
function nullified(reference: Record<string, string | null>): Record<string, string | null> {
  return Object.fromEntries(Object.keys(reference).map((name) => [name, null]));
}

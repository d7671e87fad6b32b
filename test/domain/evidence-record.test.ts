/**
 * A case's evidence record as the domain builds it (issue 29), against a real PostgreSQL: audit
 * entries not sealed yet are listed as pending and the record says where the chain stands; a
 * failed step keeps when it failed through redaction; redaction keeps each personal value as an
 * evidence-key HMAC (and a case redacted before that kept nothing shows nulls, never a value);
 * events recorded before digests were kept are digested from their body until redaction.
 */
import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cases, events, redactedEvidence } from '@/db/schema';
import { redactLockedCase } from '@/server/application/cases/redact-case';
import { sealAuditChains } from '@/server/audit/audit-chain';
import { type AuditActor, recordAudits } from '@/server/audit/record-audit';
import type { CaseRecord } from '@/server/cases/case-record';
import { findCaseById, lockCaseForUpdate } from '@/server/cases/case-repository';
import { readEvidenceRecord } from '@/server/evidence/evidence-record';
import { systemClock } from '@/server/platform/clock';
import { bodyDigest, deliveryBody, eventEnvelope } from '@/server/platform/outbox/record-events';
import { createTeam } from '@/server/teams/manage-teams';
import { teamEvidenceKey } from '@/server/teams/team-secrets';
import { failCase } from '@/server/verification/case-state';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;
const actor: AuditActor = {
  userId: null,
  email: 'agent@record.test',
  ipAddress: '198.51.100.9',
  userAgent: null,
};
const issue = () => ({ issuer: 'https://vouch.test', issuedAt: new Date(), kid: 'kid-1' });

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  teamId = (
    await createTeam(database.db, { name: 'Record Co', adminEmail: 'admin@record.test' }, systemClock)
  ).team.id;
});

afterAll(async () => {
  await inProcess?.close();
});

async function current(caseId: string): Promise<CaseRecord> {
  const record = await findCaseById(database.db, caseId);
  if (!record) throw new Error('no case');
  return record;
}

const read = async (caseId: string) =>
  readEvidenceRecord(database.db, await current(caseId), issue(), new Date());

async function redact(caseId: string): Promise<void> {
  await database.db.transaction(async (tx) => {
    const locked = await lockCaseForUpdate(tx, caseId);
    if (!locked) throw new Error('no case');
    await redactLockedCase(tx, inProcess.jobs, locked, new Date());
  });
}

describe('the evidence record', () => {
  it('lists entries not sealed yet as pending, with where the chain stands, then as sealed', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      {
        subject_email: 'pending@record.test',
        verification_methods: { email: true },
      },
    );
    await recordAudits(database.db, [
      { teamId, actor, at: new Date(Date.now() - 2000), action: 'other.thing', target: 'elsewhere' },
    ]);
    await sealAuditChains(database.db);
    await recordAudits(database.db, [
      {
        teamId,
        actor,
        at: new Date(),
        action: 'case.created',
        target: record.id,
        details: { livemode: true },
      },
      { teamId, actor, at: new Date(), action: 'case.evidence_downloaded', target: record.id },
    ]);
    const before = await read(record.id);
    expect(before.audit.entries).toEqual([]);
    expect(before.audit.pending).toEqual([
      { id: expect.any(String), action: 'case.created', at: expect.any(String) },
    ]);
    const headBefore = before.audit.sealed_through;
    expect(headBefore).toBeGreaterThanOrEqual(1);

    await sealAuditChains(database.db);
    const after = await read(record.id);
    expect(after.audit.pending).toEqual([]);
    // The download is no part of the case's history: left out.
    expect(after.audit.entries.map((e) => e.entry.action)).toEqual(['case.created']);
    expect(after.audit.sealed_through).toBe(after.audit.entries[0]?.seq);
    expect(after.audit.entries[0]?.seq).toBeGreaterThan(headBefore ?? 0);
  });

  it('lists each step once, in the methods’ order; provisional while the case is open only', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      {
        subject_email: 'order@record.test',
        verification_methods: { manager: true, email: true },
        manager_email: 'boss@record.test',
        manager_name: 'Boss',
      },
    );
    const open = await read(record.id);
    expect(open.steps.map((step) => step.method)).toEqual(['email', 'manager']);
    expect(open.provisional).toBe(true);
    await redact(record.id);
    const ended = await read(record.id);
    expect(ended.provisional).toBe(false);
    expect(ended.steps.map((step) => step.method)).toEqual(['email', 'manager']);
  });

  it('keeps when a failed step failed, and what it cites as HMACs through redaction', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      {
        subject_email: 'failed@record.test',
        subject_name: 'Zoë Ångström',
        verification_methods: { email: true, manager: true },
        manager_name: 'Mia Manager',
        manager_email: 'mia@record.test',
      },
    );
    const failedAt = new Date();
    await database.db.transaction((tx) =>
      failCase(tx, inProcess.jobs, record.id, 'manager', 'manager_declined', failedAt),
    );
    const before = await read(record.id);
    expect(before.case).toMatchObject({ status: 'failed', failure_reason: 'manager_declined' });
    expect(before.case.ended_at).toBe(failedAt.toISOString());
    expect(before.steps.find((s) => s.method === 'manager')).toEqual({
      method: 'manager',
      outcome: 'failed',
      decided_at: failedAt.toISOString(),
      attempts: 0,
      evidence: { manager_email: 'mia@record.test', decision: 'declined' },
    });

    await redact(record.id);
    const after = await read(record.id);
    const key = await teamEvidenceKey(database.db, teamId);
    const keyed = (value: string) => `hmac:${createHmac('sha256', key).update(value).digest('base64url')}`;
    expect(after.case.ended_at).toBe(failedAt.toISOString());
    expect(after.case.subject_email).toBe(keyed('failed@record.test'));
    expect(after.case.subject_name).toBe(keyed('Zoë Ångström'));
    expect(after.steps.find((s) => s.method === 'manager')).toMatchObject({
      decided_at: failedAt.toISOString(),
      evidence: { manager_email: keyed('mia@record.test'), decision: 'declined' },
    });
    expect(after.steps.find((s) => s.method === 'email')?.evidence).toEqual({ confirmed_email: null });
  });

  it('keeps an identity provider’s external_ref as its HMAC through redaction, never the value', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      { subject_email: 'hinted@record.test', verification_methods: { email: true } },
    );
    // As an identity provider's flow leaves it: its login_hint as the case's external_ref.
    await database.db.update(cases).set({ externalRef: '00uRECORD' }).where(eq(cases.id, record.id));
    expect((await read(record.id)).case.external_ref).toBe('00uRECORD');

    await redact(record.id);
    const key = await teamEvidenceKey(database.db, teamId);
    const keyed = (value: string) => `hmac:${createHmac('sha256', key).update(value).digest('base64url')}`;
    // Provable to whoever holds the login_hint and the key, and readable by nobody else: the
    // kept reference and the record issued from it are the HMAC, not the value.
    const [kept] = await database.db
      .select()
      .from(redactedEvidence)
      .where(eq(redactedEvidence.caseId, record.id));
    expect(kept?.evidence).toMatchObject({ external_ref: keyed('00uRECORD') });
    const after = await read(record.id);
    expect(after.case.external_ref).toBe(keyed('00uRECORD'));
    expect(JSON.stringify(after)).not.toContain('00uRECORD');
  });

  it('shows nulls, never a value, for a case redacted before redaction kept its references', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      {
        subject_email: 'old@record.test',
        verification_methods: { manager: true },
        manager_name: 'Old Manager',
        manager_email: 'old.manager@record.test',
      },
    );
    await redact(record.id);
    await database.db.delete(redactedEvidence).where(eq(redactedEvidence.caseId, record.id));
    const text = JSON.stringify(await read(record.id));
    expect(text).not.toContain('old@record.test');
    expect(text).not.toContain('old.manager@record.test');
    const after = await read(record.id);
    expect(after.steps[0]?.evidence).toEqual({ manager_email: null, decision: null });
    expect(after.case.subject_name).toBeNull();
  });

  it('digests the body of an event recorded before digests were kept, until redaction rewrote it', async () => {
    const record = await openCase(
      inProcess,
      { teamId, livemode: true },
      {
        subject_email: 'legacy@record.test',
        verification_methods: { email: true },
      },
    );
    const [created] = await database.db.select().from(events).where(eq(events.caseId, record.id));
    expect(created?.bodySha256).toMatch(/^[0-9a-f]{64}$/);
    await database.db.update(events).set({ bodySha256: null }).where(eq(events.caseId, record.id));
    const [legacy] = await database.db.select().from(events).where(eq(events.caseId, record.id));
    if (!legacy) throw new Error('no event');
    const fromBody = bodyDigest(deliveryBody(eventEnvelope({ ...legacy, type: 'case.created' })));
    expect(fromBody).toBe(created?.bodySha256);
    expect((await read(record.id)).events[0]?.body_sha256).toBe(fromBody);
    await redact(record.id);
    const after = await read(record.id);
    expect(after.events.find((e) => e.type === 'case.created')?.body_sha256).toBeNull();
    expect(after.events.find((e) => e.type === 'case.redacted')?.body_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

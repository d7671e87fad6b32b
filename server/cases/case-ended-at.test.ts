import { describe, expect, it } from 'vitest';
import { caseEndedAt } from './case-ended-at';
import type { CaseRecord, CaseStepRow } from './case-record';

const created = new Date('2026-03-01T09:00:00Z');
const deadline = new Date('2026-03-03T09:00:00Z');
const now = new Date('2026-03-10T09:00:00Z');

function step(method: CaseStepRow['method'], overrides: Partial<CaseStepRow> = {}): CaseStepRow {
  return {
    caseId: 'c',
    method,
    state: 'pending',
    failedAttempts: 0,
    settings: {},
    verifiedAt: null,
    failedAt: null,
    updatedAt: created,
    ...overrides,
  };
}

function record(overrides: Partial<CaseRecord>): CaseRecord {
  return {
    id: 'c',
    teamId: 't',
    livemode: true,
    publicId: 'p',
    status: 'open',
    subjectEmail: 'someone@example.test',
    subjectName: null,
    documentName: null,
    nameMatch: 'enforce',
    offerPasskey: false,
    passkeyOfferDeclinedAt: null,
    locale: null,
    notes: '',
    externalRef: null,
    failureReason: null,
    createdAt: created,
    expiresAt: deadline,
    updatedAt: created,
    canceledAt: null,
    redactedAt: null,
    resendCount: 0,
    lastResentAt: null,
    steps: [],
    ...overrides,
  };
}

describe('caseEndedAt', () => {
  it('is null while the case is open', () => {
    expect(caseEndedAt(record({}), new Date('2026-03-02T09:00:00Z'), [])).toBeNull();
  });

  it('is the deadline of a case whose time ran out, even before the sweep marks it', () => {
    expect(caseEndedAt(record({}), now, [])).toEqual(deadline);
    expect(caseEndedAt(record({ status: 'expired' }), now, [])).toEqual(deadline);
  });

  it('is the instant a canceled case was canceled', () => {
    const canceledAt = new Date('2026-03-02T10:00:00Z');
    expect(caseEndedAt(record({ status: 'expired', canceledAt }), now, [])).toEqual(canceledAt);
  });

  it('is the last verification of a closed case, redacted or not', () => {
    const first = new Date('2026-03-01T10:00:00Z');
    const last = new Date('2026-03-01T11:00:00Z');
    const closed = record({
      status: 'closed',
      redactedAt: now,
      updatedAt: now,
      steps: [
        step('email', { state: 'verified', verifiedAt: last, updatedAt: now }),
        step('sms', { state: 'verified', verifiedAt: first, updatedAt: now }),
      ],
    });
    expect(caseEndedAt(closed, now, [])).toEqual(last);
  });

  it('is when the failing step failed, kept through redaction', () => {
    const failedAt = new Date('2026-03-01T12:00:00Z');
    const failed = record({
      status: 'failed',
      redactedAt: now,
      updatedAt: now,
      steps: [step('sms', { state: 'failed', failedAt, updatedAt: now })],
    });
    expect(caseEndedAt(failed, now, [])).toEqual(failedAt);
  });

  it('is the case.failed event of a case failed before steps kept that time, else its last update unless redaction moved it', () => {
    const failedAt = new Date('2026-03-01T12:00:00Z');
    const failed = record({ status: 'failed', updatedAt: failedAt });
    expect(caseEndedAt(failed, now, [{ type: 'case.failed', createdAt: failedAt }])).toEqual(failedAt);
    expect(caseEndedAt(failed, now, [])).toEqual(failedAt);
    expect(caseEndedAt({ ...failed, redactedAt: now, updatedAt: now }, now, [])).toBeNull();
    expect(
      caseEndedAt({ ...failed, redactedAt: now, updatedAt: now }, now, [
        { type: 'case.created', createdAt: created },
        { type: 'case.failed', createdAt: failedAt },
      ]),
    ).toEqual(failedAt);
  });
});

/**
 * The passkey method against a real PostgreSQL: a case asking for it is refused for a subject who
 * holds none (in the key's team and mode); a proof completes the step and records what the
 * evidence cites, leading back to the ID check through as many re-verifications as it took; every
 * refused answer spends an attempt and names why, and the fifth fails the case; test mode's
 * simulation records the passkey it stood for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateCase } from '@/server/application/cases/simulate-case';
import type { CaseRecord } from '@/server/cases/case-record';
import { findCaseById } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { createTeam } from '@/server/teams/manage-teams';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import { passIdentity } from '@/server/verification/methods/government-id/step';
import { passkeyEvidence } from '@/server/verification/methods/passkey/evidence';
import { ceremonyCase, passkeyChallenge, provePasskeyStep } from '@/server/verification/methods/passkey/step';
import { mergeStepSettings, stepOf } from '@/server/verification/step-settings';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';
import { enrollPasskey, TEST_RELYING_PARTY } from '@/test/support/passkeys';
import type { SoftwareAuthenticator } from '@/test/support/software-authenticator';

const party = TEST_RELYING_PARTY;
let now = new Date('2026-11-29T10:00:00Z');
const clock: Clock = () => now;

let inProcess: InProcess;
let database: TestDatabase;
let test: DataScope;
let otherTeam: DataScope;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const team = (await createTeam(database.db, { name: 'Helpdesk', adminEmail: 'a@hd.test' }, clock)).team;
  test = { teamId: team.id, livemode: false };
  const other = (await createTeam(database.db, { name: 'Others', adminEmail: 'a@o.test' }, clock)).team;
  otherTeam = { teamId: other.id, livemode: false };
});

afterAll(async () => {
  await inProcess?.close();
});

const reload = async (record: CaseRecord) => {
  const found = await findCaseById(database.db, record.id);
  if (!found) throw new Error('case gone');
  return found;
};

/** A closed case whose ID check passed (the vendor's ids on its step), and a passkey it saved. */
async function verifiedWithPasskey(email: string) {
  const enrolling = await openCase(
    inProcess,
    test,
    { subject_email: email, verification_methods: { government_id: true } },
    clock,
  );
  await database.db.transaction(async (tx) => {
    await mergeStepSettings(
      tx,
      enrolling.id,
      governmentIdMethod.key,
      { provider_session_id: 'vs_enrolling', provider_report_id: 'vr_enrolling' },
      now,
    );
    await passIdentity(tx, inProcess.jobs, enrolling.id, { name: null, names: null }, now);
  });
  const closed = await reload(enrolling);
  expect(closed.status).toBe('closed');
  const { id, authenticator } = await enrollPasskey(database.db, ceremonyCase(closed), clock);
  return { enrolling: closed, passkeyId: id, authenticator };
}

function reverification(email: string, scope: DataScope = test) {
  return openCase(inProcess, scope, { subject_email: email, verification_methods: { passkey: true } }, clock);
}

/** The page's challenge for the case, signed by the authenticator (bent as told), checked. */
async function prove(
  record: CaseRecord,
  authenticator: SoftwareAuthenticator,
  bend?: Parameters<SoftwareAuthenticator['authenticate']>[1],
) {
  const options = await passkeyChallenge(database.db, record, party, now);
  if (!options.ok) throw new Error(options.why);
  const response = authenticator.authenticate(options.value.challenge, bend);
  return provePasskeyStep(database.db, inProcess.jobs, record, response, party, now);
}

describe('a case asking for a passkey', () => {
  it('is refused for a subject who holds none in the team and mode, and opens for one who does', async () => {
    await verifiedWithPasskey('holder@hd.test');
    await expect(reverification('nobody@hd.test')).rejects.toMatchObject({ appCode: 'PASSKEY_NOT_ENROLLED' });
    // The same person, asked by another team or in live mode: their passkey is not there.
    await expect(reverification('holder@hd.test', otherTeam)).rejects.toMatchObject({
      appCode: 'PASSKEY_NOT_ENROLLED',
    });
    await expect(
      reverification('holder@hd.test', { teamId: test.teamId, livemode: true }),
    ).rejects.toMatchObject({ appCode: 'PASSKEY_NOT_ENROLLED' });
    const opened = await reverification('holder@hd.test');
    expect(opened.steps.map((step) => step.method)).toEqual(['passkey']);
  });
});

describe('proving the passkey', () => {
  it('closes the case and records the passkey, its enrolling case and that case’s ID check', async () => {
    const { enrolling, passkeyId, authenticator } = await verifiedWithPasskey('ada@hd.test');
    const record = await reverification('ada@hd.test');
    now = new Date(now.getTime() + 60_000);
    await expect(prove(record, authenticator)).resolves.toEqual({ result: 'verified' });

    const proven = await reload(record);
    expect(proven.status).toBe('closed');
    const step = stepOf(proven, 'passkey');
    expect(step?.state).toBe('verified');
    expect(step?.failedAttempts).toBe(0);
    const idStep = stepOf(enrolling, governmentIdMethod.key);
    expect(passkeyEvidence.read(proven, step ?? (undefined as never))).toEqual({
      passkey_id: passkeyId,
      enrolling_case_id: enrolling.id,
      id_check_case_id: enrolling.id,
      id_check_vendor_session_id: 'vs_enrolling',
      id_check_vendor_report_id: 'vr_enrolling',
      id_checked_at: idStep?.verifiedAt?.toISOString(),
    });
  });

  it('leads back to the document through a passkey saved by a re-verification', async () => {
    const { enrolling, authenticator } = await verifiedWithPasskey('grace@hd.test');
    const second = await reverification('grace@hd.test');
    await expect(prove(second, authenticator)).resolves.toEqual({ result: 'verified' });
    // The re-verification saves a passkey of its own (another device), which a third case proves.
    const fromSecond = await enrollPasskey(database.db, ceremonyCase(await reload(second)), clock);
    const third = await reverification('grace@hd.test');
    await expect(prove(third, fromSecond.authenticator)).resolves.toEqual({ result: 'verified' });
    const step = stepOf(await reload(third), 'passkey');
    expect(step?.settings).toMatchObject({
      passkey_id: fromSecond.id,
      enrolling_case_id: second.id,
      id_check_case_id: enrolling.id,
      id_check_vendor_report_id: 'vr_enrolling',
    });
  });

  it('spends an attempt on each refused answer, names why, and fails the case at the fifth', async () => {
    const { authenticator } = await verifiedWithPasskey('eve@hd.test');
    const record = await reverification('eve@hd.test');
    await expect(prove(record, authenticator, { origin: 'https://evil.test' })).resolves.toEqual({
      result: 'wrong',
      attemptsLeft: 4,
      refused: 'wrong_origin',
    });
    await expect(prove(record, authenticator, { userVerified: false })).resolves.toEqual({
      result: 'wrong',
      attemptsLeft: 3,
      refused: 'user_not_verified',
    });
    await expect(prove(record, authenticator, { rpId: 'evil.test' })).resolves.toEqual({
      result: 'wrong',
      attemptsLeft: 2,
      refused: 'wrong_relying_party',
    });
    // An answer made for another case's challenge.
    const other = await reverification('eve@hd.test');
    const otherOptions = await passkeyChallenge(database.db, other, party, now);
    if (!otherOptions.ok) throw new Error(otherOptions.why);
    const stolen = authenticator.authenticate(otherOptions.value.challenge);
    await expect(provePasskeyStep(database.db, inProcess.jobs, record, stolen, party, now)).resolves.toEqual({
      result: 'wrong',
      attemptsLeft: 1,
      refused: 'challenge_unknown',
    });
    // The positive control, on the other case: the same authenticator proves it.
    await expect(prove(other, authenticator)).resolves.toEqual({ result: 'verified' });

    await expect(prove(record, authenticator, { counter: 0 })).resolves.toEqual({
      result: 'failed',
      refused: 'counter_regressed',
    });
    const failed = await reload(record);
    expect(failed.status).toBe('failed');
    expect(failed.failureReason).toBe('passkey_failed');
    // The case takes no more: no challenge is issued.
    await expect(passkeyChallenge(database.db, failed, party, now)).resolves.toEqual({
      ok: false,
      why: 'not_asked',
    });
  });
});

describe('test mode’s simulation', () => {
  it('completes the step with the passkey the subject used last, cited as a proof would be', async () => {
    const { enrolling, passkeyId } = await verifiedWithPasskey('sim@hd.test');
    const record = await reverification('sim@hd.test');
    const simulated = await simulateCase(
      database.db,
      test,
      { id: record.id, action: 'complete_step', method: 'passkey' },
      { clock, jobs: inProcess.jobs },
    );
    expect(simulated.status).toBe('closed');
    expect(stepOf(await reload(record), 'passkey')?.settings).toMatchObject({
      passkey_id: passkeyId,
      enrolling_case_id: enrolling.id,
      id_check_case_id: enrolling.id,
    });
    const failing = await reverification('sim@hd.test');
    const failed = await simulateCase(
      database.db,
      test,
      { id: failing.id, action: 'fail_step', method: 'passkey' },
      { clock, jobs: inProcess.jobs },
    );
    expect(failed.failureReason).toBe('passkey_failed');
  });
});

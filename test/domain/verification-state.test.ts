import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseSteps, cases, events } from '@/db/schema';
import type { CreateCaseInput } from '@/server/application/cases/wire';
import type { CaseRecord } from '@/server/cases/case-record';
import { findCaseByPublicId } from '@/server/cases/case-repository';
import { systemClock } from '@/server/platform/clock';
import { createSimulatedIdentityProvider } from '@/server/platform/providers/identity/simulated-identity-provider';
import { createTeam } from '@/server/teams/manage-teams';
import { completeSteps, failCase, spendAttempt } from '@/server/verification/case-state';
import { checkGuess } from '@/server/verification/check-guess';
import type { SlowWork } from '@/server/verification/methods/custom-question/answer';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';
import { submitIdentityUploads } from '@/server/verification/methods/government-id/step';
import {
  checkSmsCode,
  SMS_RESEND_INTERVAL_SECONDS,
  sendSmsCode,
} from '@/server/verification/methods/sms/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const { team } = await createTeam(
    database.db,
    { name: 'State Co', adminEmail: 'admin@state.test', planCode: 'enterprise' },
    systemClock,
  );
  teamId = team.id;
});

afterAll(async () => {
  await inProcess?.close();
});

function newCase(
  methods: CreateCaseInput['verification_methods'],
  extra: Partial<CreateCaseInput> = {},
): Promise<CaseRecord> {
  return openCase(
    inProcess,
    { teamId, livemode: true },
    {
      subject_email: 'subject@state.test',
      verification_methods: methods,
      ...extra,
    },
  );
}

async function caseEvents(caseId: string) {
  return database.db.select().from(events).where(eq(events.caseId, caseId)).orderBy(asc(events.createdAt));
}

async function reload(caseId: string) {
  const [row] = await database.db.select().from(cases).where(eq(cases.id, caseId));
  const steps = await database.db.select().from(caseSteps).where(eq(caseSteps.caseId, caseId));
  return { row, steps };
}

/** Hashes at once: these tests are about the step, not whose turn it is. */
const atOnce: SlowWork = (task) => task();

const image = (marker = '') =>
  new Uint8Array(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(marker)]));

describe('case state machine', () => {
  it('emits step_completed per step and closes once when every step is verified', async () => {
    const record = await newCase(
      { government_id: true, custom_question: true },
      {
        custom_question_text: 'Pet?',
        custom_question_answer: 'Rex',
      },
    );
    const now = new Date();
    const first = await database.db.transaction((tx) =>
      completeSteps(tx, inProcess.jobs, record.id, ['custom_question'], now),
    );
    expect(first.changed).toBe(true);
    expect((await reload(record.id)).row?.status).toBe('open');
    await database.db.transaction((tx) =>
      completeSteps(tx, inProcess.jobs, record.id, ['government_id', 'selfie'], now, {
        subjectName: 'Ada Lovelace',
      }),
    );
    const { row } = await reload(record.id);
    expect(row?.status).toBe('closed');
    expect(row?.subjectName).toBe('Ada Lovelace');
    const types = (await caseEvents(record.id)).map((e) => [e.type, e.data.method ?? null]);
    expect(types).toEqual([
      ['case.created', null],
      ['verification.step_completed', 'custom_question'],
      ['verification.step_completed', 'government_id'],
      ['verification.step_completed', 'selfie'],
      ['case.closed', null],
    ]);
    const closed = (await caseEvents(record.id)).find((e) => e.type === 'case.closed');
    expect(closed?.data).toMatchObject({ case_id: record.id, public_id: record.publicId, status: 'closed' });
  });

  it('a failure fails the case with its reason, and nothing changes a failed case afterwards', async () => {
    const record = await newCase(
      { sms: true, custom_question: true },
      {
        custom_question_text: 'Pet?',
        custom_question_answer: 'Rex',
      },
    );
    const now = new Date();
    const failed = await database.db.transaction((tx) =>
      failCase(tx, inProcess.jobs, record.id, 'sms', 'sms_code_failed', now),
    );
    expect(failed.changed).toBe(true);
    const again = await database.db.transaction((tx) =>
      completeSteps(tx, inProcess.jobs, record.id, ['custom_question'], now),
    );
    expect(again).toMatchObject({ changed: false, why: 'not_open' });
    expect(await spendAttempt(database.db, record.id, 'custom_question', now)).toBeNull();
    const { row } = await reload(record.id);
    expect(row).toMatchObject({ status: 'failed', failureReason: 'sms_code_failed' });
    const failedEvents = (await caseEvents(record.id)).filter((e) => e.type === 'case.failed');
    expect(failedEvents).toHaveLength(1);
    expect(failedEvents[0]?.data).toMatchObject({ status: 'failed', failure_reason: 'sms_code_failed' });
  });

  it('never changes a closed case or an open case past its expiry', async () => {
    const record = await newCase(
      { custom_question: true, sms: true },
      {
        custom_question_text: 'Pet?',
        custom_question_answer: 'Rex',
      },
    );
    const afterExpiry = new Date(record.expiresAt.getTime() + 1000);
    const late = await database.db.transaction((tx) =>
      completeSteps(tx, inProcess.jobs, record.id, ['custom_question'], afterExpiry),
    );
    expect(late).toMatchObject({ changed: false, why: 'not_open' });
    const lateFail = await database.db.transaction((tx) =>
      failCase(tx, inProcess.jobs, record.id, 'sms', 'sms_code_failed', afterExpiry),
    );
    expect(lateFail.changed).toBe(false);
    expect(await spendAttempt(database.db, record.id, 'sms', afterExpiry)).toBeNull();

    const now = new Date();
    await database.db.transaction((tx) =>
      completeSteps(tx, inProcess.jobs, record.id, ['custom_question', 'sms'], now),
    );
    expect((await reload(record.id)).row?.status).toBe('closed');
    const afterClose = await database.db.transaction((tx) =>
      failCase(tx, inProcess.jobs, record.id, 'sms', 'sms_code_failed', now),
    );
    expect(afterClose.changed).toBe(false);
    expect((await caseEvents(record.id)).map((e) => e.type)).toEqual([
      'case.created',
      'verification.step_completed',
      'verification.step_completed',
      'case.closed',
    ]);
  });

  it('concurrent completions of different steps lose none and close the case exactly once', async () => {
    for (let round = 0; round < 8; round++) {
      const record = await newCase(
        { government_id: true, custom_question: true, sms: true },
        {
          custom_question_text: 'Pet?',
          custom_question_answer: 'Rex',
        },
      );
      const now = new Date();
      const batches: Array<Array<'government_id' | 'selfie' | 'custom_question' | 'sms'>> = [
        ['government_id', 'selfie'],
        ['custom_question'],
        ['sms'],
        ['sms'],
        ['custom_question'],
      ];
      await Promise.all(
        batches.map((methods) =>
          database.db.transaction((tx) => completeSteps(tx, inProcess.jobs, record.id, methods, now)),
        ),
      );
      const { row, steps } = await reload(record.id);
      expect(row?.status).toBe('closed');
      expect(steps.every((s) => s.state === 'verified')).toBe(true);
      const all = await caseEvents(record.id);
      expect(all.filter((e) => e.type === 'case.closed')).toHaveLength(1);
      const completed = all.filter((e) => e.type === 'verification.step_completed').map((e) => e.data.method);
      expect(completed.sort()).toEqual(['custom_question', 'government_id', 'selfie', 'sms']);
    }
  });

  it('a completion racing a failure ends in exactly one terminal state with one terminal event', async () => {
    for (let round = 0; round < 8; round++) {
      const record = await newCase({ sms: true });
      const now = new Date();
      await Promise.all([
        database.db.transaction((tx) => completeSteps(tx, inProcess.jobs, record.id, ['sms'], now)),
        database.db.transaction((tx) =>
          failCase(tx, inProcess.jobs, record.id, 'sms', 'sms_code_failed', now),
        ),
      ]);
      const { row } = await reload(record.id);
      const terminal = (await caseEvents(record.id)).filter(
        (e) => e.type === 'case.closed' || e.type === 'case.failed',
      );
      expect(terminal).toHaveLength(1);
      expect(terminal[0]?.type).toBe(row?.status === 'closed' ? 'case.closed' : 'case.failed');
    }
  });

  it('attempt counters hold under concurrency: 20 simultaneous wrong guesses are checked at most 3 times', async () => {
    const record = await newCase(
      { custom_question: true },
      {
        custom_question_text: 'Pet?',
        custom_question_answer: 'Rex',
      },
    );
    let compared = 0;
    const now = new Date();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        checkGuess(database.db, inProcess.jobs, {
          caseId: record.id,
          method: 'custom_question',
          now,
          isCorrect: async () => {
            compared++;
            return false;
          },
        }),
      ),
    );
    expect(compared).toBe(3);
    expect(results.filter((r) => r.result === 'failed')).toHaveLength(1);
    expect(results.filter((r) => r.result === 'wrong')).toHaveLength(2);
    expect(results.filter((r) => r.result === 'unavailable')).toHaveLength(17);
    const { row, steps } = await reload(record.id);
    expect(row).toMatchObject({ status: 'failed', failureReason: 'custom_question_failed' });
    expect(steps[0]?.failedAttempts).toBe(3);
    expect((await caseEvents(record.id)).filter((e) => e.type === 'case.failed')).toHaveLength(1);
  });
});

describe('custom question', () => {
  it('accepts the answer normalised (case, spacing) and fails the case on the third wrong answer', async () => {
    const good = await newCase(
      { custom_question: true },
      {
        custom_question_text: 'Favourite animal?',
        custom_question_answer: 'The Blue Whale',
      },
    );
    const now = new Date();
    expect(await answerCustomQuestion(database.db, inProcess.jobs, good, 'nope', now, atOnce)).toEqual({
      result: 'wrong',
      attemptsLeft: 2,
    });
    expect(
      await answerCustomQuestion(database.db, inProcess.jobs, good, '  the   BLUE whale ', now, atOnce),
    ).toEqual({
      result: 'verified',
    });
    expect((await reload(good.id)).row?.status).toBe('closed');
    expect((await reload(good.id)).steps[0]?.failedAttempts).toBe(1);

    const bad = await newCase(
      { custom_question: true },
      {
        custom_question_text: 'Favourite animal?',
        custom_question_answer: 'The Blue Whale',
      },
    );
    expect(await answerCustomQuestion(database.db, inProcess.jobs, bad, 'a', now, atOnce)).toEqual({
      result: 'wrong',
      attemptsLeft: 2,
    });
    expect(await answerCustomQuestion(database.db, inProcess.jobs, bad, 'b', now, atOnce)).toEqual({
      result: 'wrong',
      attemptsLeft: 1,
    });
    expect(await answerCustomQuestion(database.db, inProcess.jobs, bad, 'c', now, atOnce)).toEqual({
      result: 'failed',
    });
    expect(
      await answerCustomQuestion(database.db, inProcess.jobs, bad, 'the blue whale', now, atOnce),
    ).toEqual({
      result: 'unavailable',
    });
    expect((await reload(bad.id)).row).toMatchObject({
      status: 'failed',
      failureReason: 'custom_question_failed',
    });
  });
});

describe('sms', () => {
  function capture() {
    const sent: Array<{ to: string; body: string }> = [];
    return {
      sent,
      sender: {
        send: async (m: { to: string; body: string }) => {
          sent.push(m);
          return null;
        },
      },
    };
  }
  const codeOf = (body: string | undefined) => /\b(\d{6})\b/.exec(body ?? '')?.[1] ?? '';

  it('validates the number, sends a 6-digit code, limits resends and verifies the right code once', async () => {
    const record = await newCase({ sms: true });
    const { sent, sender } = capture();
    const now = new Date();
    const base = {
      caseId: record.id,
      livemode: true,
      team: { name: 'State Co', defaultLocale: null, color: null, supportLine: null, logoPath: null },
      locale: 'en' as const,
      sender,
    };
    expect(await sendSmsCode(database.db, inProcess.jobs, { ...base, phoneInput: '12345', now })).toEqual({
      ok: false,
      why: 'invalid_phone',
    });
    expect(
      await sendSmsCode(database.db, inProcess.jobs, { ...base, phoneInput: '+44 7911 123456', now }),
    ).toEqual({
      ok: true,
      phoneLast4: '3456',
    });
    expect(sent[0]?.to).toBe('+447911123456');
    expect(codeOf(sent[0]?.body)).toMatch(/^\d{6}$/);
    const soon = await sendSmsCode(database.db, inProcess.jobs, {
      ...base,
      phoneInput: '+44 7911 123456',
      now,
    });
    expect(soon).toMatchObject({ ok: false, why: 'too_soon' });
    const later = new Date(now.getTime() + SMS_RESEND_INTERVAL_SECONDS * 1000);
    expect(
      await sendSmsCode(database.db, inProcess.jobs, { ...base, phoneInput: '+1 415 555 2671', now: later }),
    ).toMatchObject({
      ok: true,
      phoneLast4: '2671',
    });
    const code = codeOf(sent[1]?.body);
    const fresh = (await findCaseByPublicId(database.db, record.publicId))?.record as CaseRecord;
    expect(fresh.steps[0]?.settings.phone_last4).toBe('2671');
    expect(JSON.stringify(fresh.steps[0]?.settings)).not.toContain(code);

    const wrong = code === '000000' ? '111111' : '000000';
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, wrong, later)).toEqual({
      result: 'wrong',
      attemptsLeft: 4,
    });
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, '12', later)).toEqual({
      result: 'malformed',
    });
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, code, later)).toEqual({
      result: 'verified',
    });
    expect((await reload(record.id)).row?.status).toBe('closed');
  });

  it('refuses an expired code and fails the case on the fifth wrong code', async () => {
    const record = await newCase({ sms: true });
    const { sent, sender } = capture();
    const now = new Date();
    await sendSmsCode(database.db, inProcess.jobs, {
      caseId: record.id,
      livemode: true,
      team: { name: 'T', defaultLocale: null, color: null, supportLine: null, logoPath: null },
      locale: 'en',
      sender,
      phoneInput: '+447911123456',
      now,
    });
    const fresh = (await findCaseByPublicId(database.db, record.publicId))?.record as CaseRecord;
    const code = codeOf(sent[0]?.body);
    const elevenMinutes = new Date(now.getTime() + 11 * 60_000);
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, code, elevenMinutes)).toEqual({
      result: 'expired',
    });
    const wrong = code === '000000' ? '111111' : '000000';
    for (const left of [4, 3, 2, 1]) {
      expect(await checkSmsCode(database.db, inProcess.jobs, fresh, wrong, now)).toEqual({
        result: 'wrong',
        attemptsLeft: left,
      });
    }
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, wrong, now)).toEqual({ result: 'failed' });
    expect(await checkSmsCode(database.db, inProcess.jobs, fresh, code, now)).toEqual({
      result: 'unavailable',
    });
    expect((await reload(record.id)).row).toMatchObject({
      status: 'failed',
      failureReason: 'sms_code_failed',
    });
  });
});

describe('government id and selfie (simulated provider)', () => {
  const provider = createSimulatedIdentityProvider();

  it('a pass verifies both steps and takes the name on the document', async () => {
    const record = await newCase({ government_id: true });
    const result = await submitIdentityUploads(database.db, inProcess.jobs, {
      record,
      document: { fileName: 'passport.png', bytes: image('VOUCH-TEST:NAME=Grace Hopper;') },
      selfie: { fileName: 'me.png', bytes: image() },
      provider,
      now: new Date(),
    });
    expect(result).toEqual({
      outcome: 'verified',
      name: 'Grace Hopper',
      names: { given: 'Grace', family: 'Hopper' },
      reportId: expect.stringMatching(/^simchk_/),
    });
    const { row, steps } = await reload(record.id);
    expect(row).toMatchObject({
      status: 'closed',
      subjectName: 'Grace Hopper',
      documentName: 'Grace Hopper',
    });
    expect(steps.map((s) => s.state)).toEqual(['verified', 'verified']);
    // The check's id stays on the step, for the case's evidence record.
    expect(steps.find((s) => s.method === 'government_id')?.settings).toMatchObject({
      provider_report_id: result.outcome === 'verified' ? result.reportId : null,
    });
  });

  /** A case with government_id whose document (simulated) shows `shown`, or the name expected. */
  async function checkDocument(extra: Partial<CreateCaseInput>, shown: string | null) {
    const record = await newCase({ government_id: true }, extra);
    const result = await submitIdentityUploads(database.db, inProcess.jobs, {
      record,
      document: { fileName: 'id.png', bytes: image(shown === null ? '' : `VOUCH-TEST:NAME=${shown};`) },
      selfie: { fileName: 'me.png', bytes: image() },
      provider,
      now: new Date(),
    });
    const { row, steps } = await reload(record.id);
    const settings = steps.find((s) => s.method === 'government_id')?.settings ?? {};
    return { result, row, nameMatched: settings.name_matched ?? null };
  }

  it("keeps the team's name and fails a case whose document shows another (name_mismatch)", async () => {
    const { row, nameMatched } = await checkDocument({ subject_name: 'Yuki Tanaka' }, 'Sam Sample');
    expect(row).toMatchObject({
      status: 'failed',
      failureReason: 'name_mismatch',
      subjectName: 'Yuki Tanaka',
      documentName: 'Sam Sample',
    });
    expect(nameMatched).toBe(false);
  });

  it('closes a mismatched case whose name_match is record, keeping both names', async () => {
    const { row, nameMatched } = await checkDocument(
      { subject_name: 'Yuki Tanaka', name_match: 'record' },
      'Sam Sample',
    );
    expect(row).toMatchObject({
      status: 'closed',
      failureReason: null,
      subjectName: 'Yuki Tanaka',
      documentName: 'Sam Sample',
      nameMatch: 'record',
    });
    expect(nameMatched).toBe(false);
  });

  it.each([
    ['Yuki Tanaka', 'TANAKA Yuki', true],
    ['José García-Lopez', 'Jose Garcia Lopez', true],
    ['Katharina Schmidt', 'Katarina Schmidt', true],
    ['Ana Li', 'Ana Lu', false],
    ['山田花子', '山田花了', false],
    ['Jane Doe', 'John Smith', false],
  ])('compares %s with a document showing %s: matched %s', async (given, shown, matched) => {
    const { row, nameMatched } = await checkDocument({ subject_name: given }, shown);
    expect(nameMatched).toBe(matched);
    expect(row).toMatchObject({
      status: matched ? 'closed' : 'failed',
      subjectName: given,
      documentName: shown,
    });
  });

  it("takes the document's name for a case given none, comparing nothing", async () => {
    const { row, nameMatched } = await checkDocument({}, 'Grace Hopper');
    expect(row).toMatchObject({
      status: 'closed',
      subjectName: 'Grace Hopper',
      documentName: 'Grace Hopper',
    });
    expect(nameMatched).toBeNull();
  });

  it('the simulated document shows the name the case expects unless told another', async () => {
    const { result, row, nameMatched } = await checkDocument({ subject_name: 'Yuki Tanaka' }, null);
    expect(result).toMatchObject({ outcome: 'verified', name: 'Yuki Tanaka' });
    expect(row).toMatchObject({ status: 'closed', documentName: 'Yuki Tanaka' });
    expect(nameMatched).toBe(true);
  });

  it.each([
    [
      'document',
      { fileName: 'reject-document.png', bytes: image() },
      { fileName: 'me.png', bytes: image() },
      'government_id_rejected',
    ],
    [
      'selfie',
      { fileName: 'id.png', bytes: image() },
      { fileName: 'x.png', bytes: image('VOUCH-TEST:REJECT-SELFIE') },
      'selfie_rejected',
    ],
    [
      'non-image document',
      { fileName: 'id.png', bytes: new Uint8Array([1, 2, 3, 4]) },
      { fileName: 'me.png', bytes: image() },
      'government_id_rejected',
    ],
  ])('a rejected %s fails the case', async (_label, document, selfie, reason) => {
    const record = await newCase({ government_id: true });
    await submitIdentityUploads(database.db, inProcess.jobs, {
      record,
      document,
      selfie,
      provider,
      now: new Date(),
    });
    const { row } = await reload(record.id);
    expect(row).toMatchObject({ status: 'failed', failureReason: reason, subjectName: null });
    const steps = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, record.id), eq(caseSteps.state, 'failed')));
    expect(steps).toHaveLength(1);
  });
});

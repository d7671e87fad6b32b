/**
 * The console's CSV import (decisions: "Batch creation and imports") in-process against a real
 * PostgreSQL: the upload checks every row and creates nothing, a start queues the worker's job
 * and is audited, the run creates each valid row's case exactly as a single create would
 * (charged in order, evented, mailed, audited as the uploader's), a cancellation stops it between
 * chunks, a run that lost its worker is handed on and finishes without creating a row twice, and
 * the result file has one line per row.
 */
import { parse } from 'csv-parse/sync';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLog,
  caseImportRows,
  caseImports,
  caseSteps,
  cases,
  events,
  mailOutbox,
  teams,
  usageCounters,
  type VerificationMethod,
} from '@/db/schema';
import { describeZodError } from '@/server/api/validation-messages';
import { caseImportResultCsv } from '@/server/application/case-imports/case-import-wire';
import { cancelCaseImport, startCaseImport } from '@/server/application/case-imports/change-case-import';
import { draftCaseImport } from '@/server/application/case-imports/draft-case-import';
import { draftForecast } from '@/server/application/case-imports/forecast-case-import';
import {
  type CaseImportRunDeps,
  resumeStrandedImports,
  runCaseImport,
  runImportChunk,
  STRANDED_AFTER_MS,
} from '@/server/application/case-imports/run-case-import';
import { listCases } from '@/server/application/cases/list-cases';
import { billingPeriodAt } from '@/server/billing/billing-period';
import { findImport, resultRows } from '@/server/case-imports/queries';
import { importAnswerKey, sealingAnswers, unsealAnswer } from '@/server/case-imports/sealed-answers';
import { findCaseByPublicId } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';
import { ceremonyCase } from '@/server/verification/methods/passkey/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';
import { enrollPasskey } from '@/test/support/passkeys';

let inProcess: InProcess;
let database: TestDatabase;
let now = new Date('2026-11-20T10:00:00Z');
const clock: Clock = () => new Date(now);
const actor = {
  userId: 'user-1',
  email: 'owner@importer.test',
  ipAddress: '192.0.2.7',
  userAgent: 'Firefox',
};

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
});

afterAll(async () => {
  await inProcess?.close();
});

async function newTeam(name: string): Promise<DataScope> {
  const { team } = await createTeam(
    database.db,
    { name, adminEmail: `owner@${name.toLowerCase()}.test` },
    clock,
  );
  return { teamId: team.id, livemode: true };
}

function context(scope: DataScope) {
  return { db: database.db, teamId: scope.teamId, scope, actor, clock, jobs: inProcess.jobs, env: {} };
}

function runDeps(): CaseImportRunDeps {
  return {
    db: database.db,
    answerKey: () => importAnswerKey(database.db, undefined),
    clock,
    jobs: inProcess.jobs,
    caseTtlSeconds: 3600,
    pageBase: 'https://vouch.test',
    defaultLocale: 'en',
  };
}

const csvOf = (count: number, from = 0) =>
  `email,name\n${Array.from({ length: count }, (_, n) => `hire-${from + n}@wave.test,Hire ${from + n}`).join('\n')}\n`;

async function draft(scope: DataScope, csv: string) {
  return draftCaseImport(
    context(scope),
    { fileName: 'wave.csv', csv, defaultMethods: ['email'] },
    describeZodError,
  );
}

async function teamCases(scope: DataScope) {
  return database.db.select().from(cases).where(eq(cases.teamId, scope.teamId));
}

async function resultFile(scope: DataScope, id: string) {
  const record = await findImport(database.db, scope, id);
  if (!record) throw new Error('import gone');
  const csv = caseImportResultCsv(record, await resultRows(database.db, id), 'https://vouch.test');
  return parse(csv, { columns: true }) as Array<Record<string, string>>;
}

/** Sets the team's use of its plan this period (units of each method) and its top-up balance. */
async function spend(
  scope: DataScope,
  used: Partial<Record<VerificationMethod, number>>,
  balanceCents: number,
) {
  const [team] = await database.db.select().from(teams).where(eq(teams.id, scope.teamId));
  if (!team) throw new Error('team gone');
  const period = billingPeriodAt(team.billingAnchor, clock());
  const entries = Object.entries(used);
  if (entries.length > 0) {
    await database.db
      .insert(usageCounters)
      .values(
        entries.map(([method, includedUsed]) => ({
          teamId: scope.teamId,
          periodStart: period.start,
          method,
          includedUsed,
        })),
      )
      .onConflictDoUpdate({
        target: [usageCounters.teamId, usageCounters.periodStart, usageCounters.method],
        set: { includedUsed: sql`excluded.included_used` },
      });
  }
  await database.db.update(teams).set({ topupBalanceCents: balanceCents }).where(eq(teams.id, scope.teamId));
}

/** The import's outcome once run: rows created and rows refused when written. */
async function outcome(scope: DataScope, id: string) {
  const record = await findImport(database.db, scope, id);
  return { creatable: record?.createdCount, refused: record?.failedCount };
}

describe('console CSV import', () => {
  it('checks every row on upload, naming each refused row by its line, and creates nothing', async () => {
    const scope = await newTeam('Checker');
    const preview = await draft(
      scope,
      'email,name,methods\nana@corp.test,Ana,email\nnot-an-address,Bo,email\ncy@corp.test,Cy,email manager\ndi@corp.test,Di,fingerprint\n',
    );
    expect(preview).toMatchObject({ status: 'draft', total_rows: 4, valid_rows: 1, rejected_rows: 3 });
    expect(preview.refused.map((row) => row.line)).toEqual([3, 4, 5]);
    expect(preview.refused[0]?.detail).toMatch(/subject_email/);
    expect(preview.refused[1]?.detail).toMatch(/manager_email/);
    expect(preview.refused[2]?.detail).toMatch(/fingerprint/);
    expect(await teamCases(scope)).toEqual([]);
    await expect(draft(scope, 'name\nAna\n')).rejects.toMatchObject({ appCode: 'VALIDATION_ERROR' });
    // A custom answer is sealed as the file is checked, never hashed there (the worker hashes it
    // as the row is created), so a file may hold as many as it has rows.
    const questions = (n: number) =>
      `email,methods,custom_question_text,custom_question_answer\n${Array.from({ length: n }, (_, i) => `q${i}@corp.test,custom_question,Badge colour?,Blue`).join('\n')}\n`;
    const asked = await draft(scope, questions(600));
    expect(asked.valid_rows).toBe(600);
    const [row] = await database.db
      .select()
      .from(caseImportRows)
      .where(eq(caseImportRows.importId, asked.id));
    // Kept sealed only: the draft holds no plain answer, and no hash was made for it.
    expect(JSON.stringify(row?.prepared)).not.toContain('Blue');
    expect(row?.prepared).toMatchObject({
      settings: { custom_question: { question: 'Badge colour?', answer_sealed: expect.any(String) } },
    });
    expect(JSON.stringify(row?.prepared)).not.toContain('answer_hash');
    // A file none of whose rows can become a case cannot be started.
    const hopeless = await draft(scope, 'email\nnobody\n');
    expect(hopeless).toMatchObject({ valid_rows: 0, rejected_rows: 1 });
    await expect(startCaseImport(context(scope), hopeless.id)).rejects.toMatchObject({
      appCode: 'VALIDATION_ERROR',
    });
  });

  it('refuses at the check a row asking for a passkey of someone who holds none, and reads offer_passkey', async () => {
    const scope = await newTeam('Returning');
    const holder = await openCase(
      inProcess,
      scope,
      { subject_email: 'holder@corp.test', verification_methods: { email: true } },
      clock,
    );
    await enrollPasskey(database.db, ceremonyCase(holder), clock);
    const preview = await draft(
      scope,
      'email,methods,offer_passkey\nholder@corp.test,passkey,no\nnewcomer@corp.test,passkey,no\nhire@corp.test,email,yes\n',
    );
    expect(preview).toMatchObject({ total_rows: 3, valid_rows: 2, rejected_rows: 1 });
    expect(preview.refused).toEqual([{ line: 3, detail: expect.stringMatching(/no passkey/) }]);
    const rows = await database.db
      .select()
      .from(caseImportRows)
      .where(eq(caseImportRows.importId, preview.id));
    expect(rows.find((row) => row.line === 3)?.errorCode).toBe('PASSKEY_NOT_ENROLLED');
    const offered = (line: number) =>
      (rows.find((row) => row.line === line)?.prepared as { input: { offer_passkey?: boolean } } | undefined)
        ?.input.offer_passkey;
    expect([offered(2), offered(4)]).toEqual([false, true]);
  });

  it('creates each row’s case as a single create would, audited as the uploader’s, with a result line per row', async () => {
    const scope = await newTeam('Wave');
    const csv = `${csvOf(30).trimEnd()}\nbroken-address,Nobody\n`;
    const preview = await draft(scope, csv);
    const started = await startCaseImport(context(scope), preview.id);
    expect(started.status).toBe('queued');
    const queued = await inProcess.queue.findJobs(QUEUES.caseImport, { data: { importId: preview.id } });
    expect(queued).toHaveLength(1);

    expect(await runCaseImport(runDeps(), preview.id)).toBe(30);
    const record = await findImport(database.db, scope, preview.id);
    expect(record).toMatchObject({ status: 'succeeded', createdCount: 30, failedCount: 0, validRows: 30 });
    const created = await teamCases(scope);
    expect(created).toHaveLength(30);
    const createdEvents = await database.db.select().from(events).where(eq(events.teamId, scope.teamId));
    expect(createdEvents.filter((event) => event.type === 'case.created')).toHaveLength(30);
    const mails = await database.db.select().from(mailOutbox);
    expect(
      mails.filter((mail) => mail.to.endsWith('@wave.test') && created.some((c) => c.id === mail.caseId)),
    ).toHaveLength(30);
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.teamId, scope.teamId));
    expect(
      audit.filter((entry) => entry.action === 'case.created' && entry.actorEmail === actor.email),
    ).toHaveLength(30);
    expect(audit.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['case_import.started', 'case_import.finished']),
    );
    // The run's end is the service's own doing, and audited as such, not as the uploader's.
    expect(audit.find((entry) => entry.action === 'case_import.finished')?.actorEmail).toBe('Vouch (system)');
    // A created row keeps no copy of its input: the case holds it, and its redaction scrubs it.
    const rows = await database.db
      .select()
      .from(caseImportRows)
      .where(eq(caseImportRows.importId, preview.id));
    expect(rows.filter((row) => row.prepared !== null)).toEqual([]);

    const result = await resultFile(scope, preview.id);
    expect(result).toHaveLength(31);
    expect(result[0]).toMatchObject({ line: '2', subject_email: 'hire-0@wave.test', outcome: 'created' });
    const first = created.find((c) => c.subjectEmail === 'hire-0@wave.test');
    expect(result[0]?.case_id).toBe(first?.id);
    expect(result[0]?.verification_url).toBe(`https://vouch.test/v/${first?.publicId}`);
    expect(result[30]).toMatchObject({ line: '32', subject_email: 'broken-address', outcome: 'refused' });
    expect(result[30]?.error).toMatch(/subject_email/);
  });

  it('hashes each sealed answer as its row is created (the subject answers it), and refuses a row sealed under another secret', async () => {
    const scope = await newTeam('Questions');
    const preview = await draft(
      scope,
      'email,methods,custom_question_text,custom_question_answer\nqa@corp.test,custom_question,Badge colour?,Deep Blue\nqb@corp.test,custom_question,Badge colour?,Red\n',
    );
    await startCaseImport(context(scope), preview.id);
    expect(await runCaseImport(runDeps(), preview.id)).toBe(2);
    const created = await teamCases(scope);
    const steps = await database.db.select().from(caseSteps).where(eq(caseSteps.method, 'custom_question'));
    const first = steps.find(
      (step) => step.caseId === created.find((c) => c.subjectEmail === 'qa@corp.test')?.id,
    );
    expect(first?.settings).toMatchObject({
      question: 'Badge colour?',
      answer_hash: expect.any(String),
      answer_salt: expect.any(String),
    });
    expect(JSON.stringify(first?.settings)).not.toMatch(/sealed|Deep Blue/);
    const record = await findCaseByPublicId(
      database.db,
      created.find((c) => c.subjectEmail === 'qa@corp.test')?.publicId ?? '',
    );
    if (!record) throw new Error('case gone');
    expect(
      await answerCustomQuestion(database.db, inProcess.jobs, record.record, 'deep  blue', clock(), (t) =>
        t(),
      ),
    ).toEqual({
      result: 'verified',
    });

    // Sealed under another secret (KEYS_SECRET changed between check and run): refused, named.
    const other = await draft(
      scope,
      'email,methods,custom_question_text,custom_question_answer\nqc@corp.test,custom_question,Q?,A\n',
    );
    await startCaseImport(context(scope), other.id);
    const otherKey = () => importAnswerKey(database.db, 'another-signing-key-secret-of-32-characters');
    expect(await runCaseImport({ ...runDeps(), answerKey: otherKey }, other.id)).toBe(0);
    const result = await resultFile(scope, other.id);
    expect(result[0]).toMatchObject({ subject_email: 'qc@corp.test', outcome: 'refused' });
    expect(result[0]?.error).toMatch(/could not be read back/);
  });

  it('binds each sealed answer to its team: sealed in one team’s draft, it is not read back as another’s', async () => {
    const key = await importAnswerKey(database.db, undefined);
    const [sealer, other] = [await newTeam('Sealer'), await newTeam('Stranger')];
    const kept = await sealingAnswers(key, sealer.teamId)('Deep Blue');
    if (!('answer_sealed' in kept)) throw new Error('not sealed');
    const sealed = kept.answer_sealed;
    expect(unsealAnswer(key, sealer.teamId, sealed)).toBe('Deep Blue');
    // Same key (one KEYS_SECRET for the whole service): only the team bound in (AAD) keeps one
    // team's sealed answer from becoming another team's case.
    expect(() => unsealAnswer(key, other.teamId, sealed)).toThrow();

    // A row of the sealer's draft carried into the stranger's import (the rows are only data in
    // the database): the run refuses it as unreadable, and creates no case from it.
    const csv =
      'email,methods,custom_question_text,custom_question_answer\nqx@corp.test,custom_question,Badge colour?,Deep Blue\n';
    const theirs = await draft(sealer, csv);
    const mine = await draft(other, csv.replace('Deep Blue', 'Red'));
    const [carried] = await database.db
      .select({ prepared: caseImportRows.prepared })
      .from(caseImportRows)
      .where(eq(caseImportRows.importId, theirs.id));
    expect(JSON.stringify(carried?.prepared)).toContain('answer_sealed');
    await database.db
      .update(caseImportRows)
      .set({ prepared: carried?.prepared })
      .where(eq(caseImportRows.importId, mine.id));
    await startCaseImport(context(other), mine.id);
    expect(await runCaseImport(runDeps(), mine.id)).toBe(0);
    expect(await teamCases(other)).toEqual([]);
    const result = await resultFile(other, mine.id);
    expect(result[0]).toMatchObject({ subject_email: 'qx@corp.test', outcome: 'refused' });
    expect(result[0]?.error).toMatch(/could not be read back/);
  });

  it('spends the allowance exactly: rows past the last unit are refused and named in the result', async () => {
    // The trial plan allows 50 e-mail checks, and the team has no balance to top up from.
    const scope = await newTeam('Trial');
    const preview = await draft(scope, csvOf(130));
    await startCaseImport(context(scope), preview.id);
    expect(await runCaseImport(runDeps(), preview.id)).toBe(50);
    expect(await findImport(database.db, scope, preview.id)).toMatchObject({
      createdCount: 50,
      failedCount: 80,
    });
    const result = await resultFile(scope, preview.id);
    expect(result.filter((row) => row.outcome === 'created')).toHaveLength(50);
    expect(
      result.slice(50).every((row) => row.outcome === 'refused' && /allowance/.test(row.error ?? '')),
    ).toBe(true);
    expect(result[50]?.subject_email).toBe('hire-50@wave.test');
  });

  it('stops between chunks when canceled, and says so for every row it did not reach', async () => {
    const scope = await newTeam('Cancel');
    await database.db.execute(
      // A large allowance, so that only the cancellation stops the import.
      `update teams set topup_balance_cents = 100000 where id = '${scope.teamId}'`,
    );
    const preview = await draft(scope, csvOf(250));
    await startCaseImport(context(scope), preview.id);
    expect(await runImportChunk(runDeps(), preview.id)).toBe(100);
    const canceled = await cancelCaseImport(context(scope), preview.id);
    expect(canceled).toMatchObject({ status: 'canceled', created_count: 100 });
    expect(await runCaseImport(runDeps(), preview.id)).toBe(0);
    expect(await teamCases(scope)).toHaveLength(100);
    const result = await resultFile(scope, preview.id);
    expect(
      result.slice(100).every((row) => row.outcome === 'not_created' && /canceled/.test(row.error ?? '')),
    ).toBe(true);
    const audit = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, scope.teamId), eq(auditLog.action, 'case_import.canceled')));
    expect(audit).toHaveLength(1);
    await expect(startCaseImport(context(scope), preview.id)).rejects.toMatchObject({
      appCode: 'VALIDATION_ERROR',
    });
  });

  it('hands an import whose worker stopped to a new run, which finishes it without creating a row twice', async () => {
    const scope = await newTeam('Resume');
    await database.db.execute(`update teams set topup_balance_cents = 100000 where id = '${scope.teamId}'`);
    const preview = await draft(scope, csvOf(220));
    await startCaseImport(context(scope), preview.id);
    await runImportChunk(runDeps(), preview.id);
    // The worker dies here. Until its heartbeat is old, the import is not handed on.
    expect(await resumeStrandedImports(runDeps())).toBe(0);
    now = new Date(now.getTime() + STRANDED_AFTER_MS + 1000);
    expect(await resumeStrandedImports(runDeps())).toBe(1);
    // Claimed: the next tick leaves it to the run just queued.
    expect(await resumeStrandedImports(runDeps())).toBe(0);
    const jobs = await inProcess.queue.findJobs(QUEUES.caseImport, { data: { importId: preview.id } });
    expect(jobs).toHaveLength(2);
    // Two runs at once (the old job retried, the new one) only take turns.
    const [a, b] = await Promise.all([
      runCaseImport(runDeps(), preview.id),
      runCaseImport(runDeps(), preview.id),
    ]);
    expect(a + b).toBe(120);
    const created = await teamCases(scope);
    expect(created).toHaveLength(220);
    expect(new Set(created.map((c) => c.subjectEmail)).size).toBe(220);
    expect(await findImport(database.db, scope, preview.id)).toMatchObject({
      status: 'succeeded',
      createdCount: 220,
    });
  });

  it('addresses each row’s subject in the language its column names (the supported locale a tag stands for)', async () => {
    const scope = await newTeam('Languages');
    const preview = await draft(
      scope,
      'email,language\nana@corp.test,de-AT\nbo@corp.test,\ncy@corp.test,klingon\n',
    );
    expect(preview).toMatchObject({ valid_rows: 2, rejected_rows: 1 });
    expect(preview.refused[0]?.detail).toMatch(/supported locales: en, de/);
    await startCaseImport(context(scope), preview.id);
    await runCaseImport(runDeps(), preview.id);
    const created = await teamCases(scope);
    expect(Object.fromEntries(created.map((c) => [c.subjectEmail, c.locale]))).toEqual({
      'ana@corp.test': 'de',
      'bo@corp.test': null,
    });
  });

  it('keeps each team’s and mode’s imports apart', async () => {
    const scope = await newTeam('Owner');
    const other = await newTeam('Other');
    const preview = await draft(scope, csvOf(2));
    await expect(startCaseImport(context(other), preview.id)).rejects.toMatchObject({ appCode: 'NOT_FOUND' });
    await expect(startCaseImport(context({ ...scope, livemode: false }), preview.id)).rejects.toMatchObject({
      appCode: 'NOT_FOUND',
    });
    expect(await findImport(database.db, other, preview.id)).toBeNull();
    expect(await database.db.select().from(caseImports).where(eq(caseImports.id, preview.id))).toHaveLength(
      1,
    );
  });
});

describe('an import’s forecast', () => {
  it('prices the valid rows as their creation will: the plan’s units left, then the top-up balance, in row order', async () => {
    // A trial team near its limits: 5 e-mail units left, no SMS unit, $30.00 of top-up. Even rows
    // ask for e-mail, odd ones for e-mail and SMS (10 and 25 cents once the units are spent).
    const scope = await newTeam('Forecast');
    await spend(scope, { email: 45, sms: 50 }, 3000);
    const methods = (n: number) => (n % 2 === 0 ? 'email' : 'email sms');
    const csv = `email,name,methods\n${Array.from({ length: 150 }, (_, n) => `f${n}@fore.test,F ${n},${methods(n)}`).join('\n')}\n`;
    const preview = await draft(scope, csv);
    // Rows 0–4 take the e-mail units (1 and 3 pay 25 cents for SMS): 2,950 cents left; each pair
    // after costs 45, so after row 134 25 cents are left. Row 135 (35 cents) is refused, 136 (10)
    // paid, 137 refused, 138 paid, and from 139 on 5 cents cover nothing.
    expect(preview.forecast).toEqual({
      creatable: 137,
      refused: 13,
      reason_code: 'INSUFFICIENT_ALLOWANCE',
      reason:
        'The allowance for sms is used up for this billing period and the top-up balance (25 cents) does not cover it.',
      charged: true,
      plan: 'trial',
      plan_name: 'Trial',
      included_units: 50,
      units_left: [
        { method: 'email', units: 5 },
        { method: 'sms', units: 0 },
      ],
      period_end: billingPeriodAt(now, now).end.toISOString(),
      topup_balance_cents: 3000,
      subscription_status: 'trialing',
      trial_ends_at: new Date(now.getTime() + 14 * 86_400_000).toISOString(),
    });

    await startCaseImport(context(scope), preview.id, preview.forecast?.creatable);
    expect(await runCaseImport(runDeps(), preview.id)).toBe(137);
    expect(await outcome(scope, preview.id)).toEqual({ creatable: 137, refused: 13 });
    const result = await resultFile(scope, preview.id);
    const refusedLines = result.filter((row) => row.outcome === 'refused').map((row) => Number(row.line));
    // Row n is on line n + 2 (the header is line 1).
    expect(refusedLines).toEqual(
      [135, 137, ...Array.from({ length: 11 }, (_, i) => 139 + i)].map((n) => n + 2),
    );
    // The forecast's reason is the first refused row's, word for word.
    expect(result.find((row) => row.outcome === 'refused')?.error).toBe(preview.forecast?.reason);
    const [team] = await database.db.select().from(teams).where(eq(teams.id, scope.teamId));
    expect(team?.topupBalanceCents).toBe(5);
  });

  it('refuses every row of a trial past its end, in the words of TRIAL_EXPIRED, and will not start', async () => {
    const scope = await newTeam('Expired');
    await database.db
      .update(teams)
      .set({ trialEndsAt: new Date(now.getTime() - 60_000) })
      .where(eq(teams.id, scope.teamId));
    const preview = await draft(scope, csvOf(3));
    expect(preview.forecast).toMatchObject({
      creatable: 0,
      refused: 3,
      reason_code: 'TRIAL_EXPIRED',
      reason: `The trial ended at ${new Date(now.getTime() - 60_000).toISOString()}; choose a plan to continue.`,
    });
    await expect(startCaseImport(context(scope), preview.id, 0)).rejects.toMatchObject({
      appCode: 'TRIAL_EXPIRED',
      detail: preview.forecast?.reason,
    });
    // Run anyway (queued behind the check's back), it refuses exactly what was foreseen, as foreseen.
    await database.db.update(caseImports).set({ status: 'queued' }).where(eq(caseImports.id, preview.id));
    expect(await runCaseImport(runDeps(), preview.id)).toBe(0);
    expect(await outcome(scope, preview.id)).toEqual({ creatable: 0, refused: 3 });
    const result = await resultFile(scope, preview.id);
    expect(result.map((row) => row.error)).toEqual(Array(3).fill(preview.forecast?.reason));

    // A canceled subscription is refused the same way, in its own words.
    await database.db.update(teams).set({ subscriptionStatus: 'canceled' }).where(eq(teams.id, scope.teamId));
    const later = await draft(scope, csvOf(2));
    expect(later.forecast).toMatchObject({
      creatable: 0,
      refused: 2,
      reason_code: 'TRIAL_EXPIRED',
      reason: 'The subscription is canceled; no new cases can be created.',
    });
  });

  it('foresees every valid row of a test-mode import created, charged nothing, whatever the plan', async () => {
    const live = await newTeam('Tester');
    await spend(live, { email: 50 }, 0);
    await database.db
      .update(teams)
      .set({ trialEndsAt: new Date(now.getTime() - 60_000) })
      .where(eq(teams.id, live.teamId));
    const scope = { ...live, livemode: false };
    const preview = await draft(scope, `${csvOf(120).trimEnd()}\nbroken,Nobody\n`);
    expect(preview.forecast).toMatchObject({
      creatable: 120,
      refused: 0,
      reason_code: null,
      reason: null,
      charged: false,
      plan: null,
      included_units: null,
      topup_balance_cents: null,
    });
    await startCaseImport(context(scope), preview.id, 120);
    expect(await runCaseImport(runDeps(), preview.id)).toBe(120);
    expect(await outcome(scope, preview.id)).toEqual({ creatable: 120, refused: 0 });
  });

  it('will not start on figures the owner was not shown, and is only ever optimistic by what others spend meanwhile', async () => {
    const scope = await newTeam('Moving');
    await spend(scope, { email: 45 }, 0);
    const preview = await draft(scope, csvOf(10));
    expect(preview.forecast).toMatchObject({ creatable: 5, refused: 5 });
    // Two units spent elsewhere after the check: the start names the new figures instead.
    await spend(scope, { email: 47 }, 0);
    await expect(startCaseImport(context(scope), preview.id, 5)).rejects.toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: expect.stringMatching(/forecast changed.*3 rows can now become cases, 7 rows would be refused/),
    });
    const record = await findImport(database.db, scope, preview.id);
    if (!record) throw new Error('import gone');
    expect(await draftForecast(database.db, record, clock())).toMatchObject({ creatable: 3, refused: 7 });
    // Confirmed on the new figures, it starts; one more unit spent while it waits makes it one fewer.
    expect((await startCaseImport(context(scope), preview.id, 3)).status).toBe('queued');
    await spend(scope, { email: 48 }, 0);
    expect(await runCaseImport(runDeps(), preview.id)).toBe(2);
    expect(await outcome(scope, preview.id)).toEqual({ creatable: 2, refused: 8 });
  });
});

describe('imported cases', () => {
  it('carry each row’s name and list in the file’s order (newest first: the last row first)', async () => {
    const scope = await newTeam('Ordered');
    await spend(scope, {}, 100_000);
    const preview = await draft(scope, csvOf(130));
    await startCaseImport(context(scope), preview.id, preview.forecast?.creatable);
    // Every row of a chunk is written with one created_at (and this clock stands still across
    // chunks): only the ids can keep the file's order.
    expect(await runCaseImport(runDeps(), preview.id)).toBe(130);
    const listed = [];
    let cursor: string | undefined;
    do {
      const page = await listCases(database.db, scope, cursor ? { cursor } : {}, clock());
      listed.push(...page.results);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(listed.map((c) => [c.subjectEmail, c.subjectName])).toEqual(
      Array.from({ length: 130 }, (_, i) => [`hire-${129 - i}@wave.test`, `Hire ${129 - i}`]),
    );
  });
});

/**
 * The console's CSV import (decisions: "Batch creation and imports") in-process against a real
 * PostgreSQL: the upload checks every row and creates nothing, a start queues the worker's job
 * and is audited, the run creates each valid row's case exactly as a single create would
 * (charged in order, evented, mailed, audited as the uploader's), a cancellation stops it between
 * chunks, a run that lost its worker is handed on and finishes without creating a row twice, and
 * the result file has one line per row.
 */
import { parse } from 'csv-parse/sync';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, caseImportRows, caseImports, caseSteps, cases, events, mailOutbox } from '@/db/schema';
import { describeZodError } from '@/server/api/validation-messages';
import { caseImportResultCsv } from '@/server/application/case-imports/case-import-wire';
import { cancelCaseImport, startCaseImport } from '@/server/application/case-imports/change-case-import';
import { draftCaseImport } from '@/server/application/case-imports/draft-case-import';
import {
  type CaseImportRunDeps,
  resumeStrandedImports,
  runCaseImport,
  runImportChunk,
  STRANDED_AFTER_MS,
} from '@/server/application/case-imports/run-case-import';
import { findImport, resultRows } from '@/server/case-imports/queries';
import { importAnswerKey, sealingAnswers, unsealAnswer } from '@/server/case-imports/sealed-answers';
import { findCaseByPublicId } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

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

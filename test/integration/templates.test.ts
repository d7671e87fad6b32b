/**
 * Verification templates (issue 30, part 1) in the running service: /v1/templates/ creates,
 * lists, reads, changes and deletes a team's named sets of methods (audited; each belongs to the
 * mode of the key that made it, so a test key can neither see nor change a live template; another
 * team's are 404), and POST /v1/cases/ (single and batch) accepts
 * `template` instead of methods: the template's methods, settings and locale, with the fields it
 * leaves to each case given by the case, or refused naming them.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, caseSteps, mailOutbox, verificationTemplates } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser } from '@/test/support/invitations';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

let database: TestDatabase;
let app: RunningApp;
let teamId: string;
let live: ReturnType<typeof apiClient>;
let test: ReturnType<typeof apiClient>;
let stranger: ReturnType<typeof apiClient>;
let owner: ConsoleClient;
let viewer: ConsoleClient;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(
    database.db,
    { name: 'Templates Inc', adminEmail: 'owner@templates.test', planCode: 'enterprise' },
    systemClock,
  );
  teamId = created.team.id;
  live = apiClient(app.baseUrl, created.key.token);
  test = apiClient(app.baseUrl, created.testKey.token);
  const other = await createTeam(database.db, { name: 'Other', adminEmail: 'o@other.test' }, systemClock);
  stranger = apiClient(app.baseUrl, other.testKey.token);
  owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@templates.test',
    created.owner.oneTimePassword,
    'templates-owner-password-1',
  );
  viewer = consoleClient(app.baseUrl);
  await inviteNewUser(owner, viewer, database.db, { email: 'viewer@templates.test', role: 'viewer' });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

interface TemplateWire {
  id: string;
  name: string;
  verification_methods: Record<string, boolean>;
  locale: string | null;
  custom_question_text: string | null;
  manager_name: string | null;
  manager_email: string | null;
  offer_passkey: boolean;
}

interface CaseWire {
  id: string;
  public_id: string;
  locale: string | null;
  offer_passkey: boolean;
  verification_methods: Record<string, { requested: boolean; manager_email?: string | null }>;
}

const requested = (c: CaseWire) =>
  Object.entries(c.verification_methods)
    .filter(([, m]) => m.requested)
    .map(([method]) => method);

let helpdesk: TemplateWire;
let newHire: TemplateWire;

describe('/v1/templates/', () => {
  it('creates a template (201, Location), never returning a question’s answer, and audits it', async () => {
    const res = await live.post<TemplateWire>('/v1/templates/', {
      name: 'helpdesk',
      verification_methods: { email: true, sms: true, custom_question: true },
      custom_question_text: 'Which floor is your desk on?',
      custom_question_answer: 'Fourth',
      locale: 'de-AT',
    });
    expect(res.status, res.text).toBe(201);
    helpdesk = res.body;
    expect(res.headers.get('location')).toBe(`${app.baseUrl}/v1/templates/${helpdesk.id}/`);
    expect(helpdesk).toMatchObject({
      name: 'helpdesk',
      verification_methods: { email: true, sms: true, custom_question: true },
      locale: 'de',
      custom_question_text: 'Which floor is your desk on?',
      manager_name: null,
      manager_email: null,
    });
    expect(res.text).not.toContain('Fourth');
    const created = await test.post<TemplateWire>('/v1/templates/', {
      name: 'new-hire',
      verification_methods: { government_id: true, manager: true },
    });
    expect(created.status, created.text).toBe(201);
    newHire = created.body;
    const audited = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.action, 'template.created')))
      .orderBy(auditLog.createdAt);
    expect(audited.map((row) => row.details)).toEqual([
      { name: 'helpdesk', methods: ['email', 'sms', 'custom_question'] },
      { name: 'new-hire', methods: ['government_id', 'manager'] },
    ]);
  });

  it('lists and reads each mode’s own: the other mode’s id is a 404 naming its mode; another team sees none', async () => {
    const listed = await test.get<{ results: TemplateWire[] }>('/v1/templates/');
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((t) => t.name)).toEqual(['new-hire']);
    expect(
      (await live.get<{ results: TemplateWire[] }>('/v1/templates/')).body.results.map((t) => t.name),
    ).toEqual(['helpdesk']);
    const one = await live.get<TemplateWire>(`/v1/templates/${helpdesk.id}/`);
    expect(one.body).toEqual(helpdesk);
    const otherMode = await test.get<{ detail: string }>(`/v1/templates/${helpdesk.id}/`);
    expect(otherMode.status).toBe(404);
    expect(otherMode.body.detail).toMatch(/belongs to this team’s live mode/);
    expect((await stranger.get(`/v1/templates/${helpdesk.id}/`)).status).toBe(404);
    expect((await stranger.get<{ results: unknown[] }>('/v1/templates/')).body.results).toEqual([]);
    expect((await stranger.delete(`/v1/templates/${helpdesk.id}/`)).status).toBe(404);
    const unknown = await live.get<{ detail: string }>('/v1/templates/not-an-id/');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('No template with this id.');
  });

  it('a test key cannot change live verification policy: PATCH and DELETE of a live template are 404 and change nothing', async () => {
    // The attack: a live template whose manager confirms live cases; a leaked test key points the
    // manager at the attacker and resets the answer, then deletes the template.
    const policy = await live.post<TemplateWire>('/v1/templates/', {
      name: 'live-policy',
      verification_methods: { email: true, manager: true, custom_question: true },
      manager_name: 'Mia Manager',
      manager_email: 'mia@templates.test',
      custom_question_text: 'Badge colour?',
      custom_question_answer: 'Teal',
    });
    expect(policy.status, policy.text).toBe(201);
    const [before] = await database.db
      .select()
      .from(verificationTemplates)
      .where(eq(verificationTemplates.id, policy.body.id));
    const patched = await test.patch(`/v1/templates/${policy.body.id}/`, {
      manager_email: 'attacker@evil.example',
      manager_name: 'Attacker',
      custom_question_text: 'Badge colour?',
      custom_question_answer: 'x',
    });
    expect(patched.status).toBe(404);
    expect((await test.delete(`/v1/templates/${policy.body.id}/`)).status).toBe(404);
    const [after] = await database.db
      .select()
      .from(verificationTemplates)
      .where(eq(verificationTemplates.id, policy.body.id));
    expect(after).toEqual(before);
    // The test key's own template of that name is a test template: live cases never see it.
    const shadow = await test.post<TemplateWire>('/v1/templates/', {
      name: 'live-policy',
      verification_methods: { email: true, manager: true },
      manager_name: 'Attacker',
      manager_email: 'attacker@evil.example',
    });
    expect(shadow.status, shadow.text).toBe(201);
    const opened = await live.post<CaseWire>('/v1/cases/', {
      subject_email: 'policy@templates.test',
      template: 'live-policy',
    });
    expect(opened.status, opened.text).toBe(201);
    expect(opened.body.verification_methods.manager?.manager_email).toBe('mia@templates.test');
    const mails = await database.db.select().from(mailOutbox).where(eq(mailOutbox.caseId, opened.body.id));
    expect(mails.map((mail) => mail.to)).toContain('mia@templates.test');
    expect(mails.map((mail) => mail.to)).not.toContain('attacker@evil.example');
    expect((await live.delete(`/v1/templates/${policy.body.id}/`)).status).toBe(204);
    expect((await test.delete(`/v1/templates/${shadow.body.id}/`)).status).toBe(204);
  });

  it('refuses a taken or malformed name, fields of a method not requested, and a method’s fields in part', async () => {
    const refusals: Array<[unknown, RegExp]> = [
      [
        { name: 'helpdesk', verification_methods: { email: true } },
        /name: your team already has a template named "helpdesk"/,
      ],
      [
        { name: 'Help Desk', verification_methods: { email: true } },
        /name: must be 1 to 40 lowercase letters/,
      ],
      [
        { name: 'x', verification_methods: { email: true }, manager_name: 'Mia' },
        /manager_name: only accepted when manager is requested/,
      ],
      [
        { name: 'x', verification_methods: { custom_question: true }, custom_question_text: 'Q?' },
        /custom_question_answer: required with custom_question_text/,
      ],
      [{ name: 'x', verification_methods: {} }, /request at least one method/],
    ];
    for (const [body, detail] of refusals) {
      const res = await live.post<{ code: string; detail: string }>('/v1/templates/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('changes a template: a rename, new methods (the dropped ones’ settings go), a manager given then left to each case', async () => {
    const renamed = await live.patch<TemplateWire>(`/v1/templates/${helpdesk.id}/`, { name: 'service-desk' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({
      name: 'service-desk',
      custom_question_text: 'Which floor is your desk on?',
    });
    const withManager = await live.patch<TemplateWire>(`/v1/templates/${helpdesk.id}/`, {
      verification_methods: { email: true, manager: true },
      manager_name: 'Mia Manager',
      manager_email: 'mia@templates.test',
    });
    expect(withManager.status, withManager.text).toBe(200);
    expect(withManager.body).toMatchObject({
      verification_methods: { email: true, manager: true },
      custom_question_text: null,
      manager_name: 'Mia Manager',
      manager_email: 'mia@templates.test',
    });
    const refused = await live.patch<{ detail: string }>(`/v1/templates/${helpdesk.id}/`, {
      custom_question_text: 'Q?',
      custom_question_answer: 'A',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(
      /custom_question_text: only accepted when custom_question is requested/,
    );
    const left = await live.patch<TemplateWire>(`/v1/templates/${helpdesk.id}/`, {
      manager_name: null,
      manager_email: null,
    });
    expect(left.body).toMatchObject({ manager_name: null, manager_email: null });
    const back = await live.patch<TemplateWire>(`/v1/templates/${helpdesk.id}/`, {
      name: 'helpdesk',
      verification_methods: { email: true, sms: true, custom_question: true },
      custom_question_text: 'Which floor is your desk on?',
      custom_question_answer: 'Fourth',
    });
    expect(back.status, back.text).toBe(200);
    helpdesk = back.body;
    const audited = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, helpdesk.id), eq(auditLog.action, 'template.updated')));
    expect(audited).toHaveLength(4);
  });
});

describe('POST /v1/cases/ with a template', () => {
  it('opens a case with the template’s methods, question and locale', async () => {
    const res = await live.post<CaseWire>('/v1/cases/', {
      subject_email: 'sam@templates.test',
      template: 'helpdesk',
    });
    expect(res.status, res.text).toBe(201);
    expect(requested(res.body)).toEqual(['email', 'sms', 'custom_question']);
    expect(res.body.locale).toBe('de');
    const [question] = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, res.body.id), eq(caseSteps.method, 'custom_question')));
    // The step holds the question and the answer only as a salted scrypt hash: 32 bytes and a
    // 16-byte salt, base64; never the answer, in any case or spacing.
    expect(question?.settings).toEqual({
      question: 'Which floor is your desk on?',
      answer_hash: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      answer_salt: expect.stringMatching(/^[A-Za-z0-9+/]{22}==$/),
    });
    // The template's row likewise, with a salt of its own.
    const [row] = await database.db
      .select()
      .from(verificationTemplates)
      .where(eq(verificationTemplates.id, helpdesk.id));
    expect(row?.settings.custom_question).toEqual({
      question: 'Which floor is your desk on?',
      answer_hash: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      answer_salt: expect.stringMatching(/^[A-Za-z0-9+/]{22}==$/),
    });
    for (const stored of [JSON.stringify(row), JSON.stringify(question)]) {
      expect(stored.toLowerCase()).not.toContain('fourth');
    }
    // The hash is the answer's: through the subject's page, a wrong answer is refused and the
    // template's answer (case and spacing aside) verifies the step.
    const page = await openSubjectPage(`${app.baseUrl}/v/${res.body.public_id}`);
    const wrong = await postSubjectForm(`${app.baseUrl}/v/${res.body.public_id}/question`, page, {
      answer: 'Third',
    });
    expect(wrong.headers.get('location')).toMatch(/n=question-wrong/);
    const right = await postSubjectForm(`${app.baseUrl}/v/${res.body.public_id}/question`, page, {
      answer: '  FOURTH ',
    });
    expect(right.headers.get('location')).toMatch(/n=question-verified/);
    const [answered] = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, res.body.id), eq(caseSteps.method, 'custom_question')));
    expect(answered).toMatchObject({ state: 'verified', failedAttempts: 1 });
    // A case's own locale wins over the template's.
    const french = await live.post<CaseWire>('/v1/cases/', {
      subject_email: 'fr@templates.test',
      template: 'helpdesk',
      locale: 'fr',
    });
    expect(french.body.locale).toBe('fr');
  });

  it('takes the manager the template leaves to each case from the case, or refuses naming it', async () => {
    const missing = await test.post<{ detail: string }>('/v1/cases/', {
      subject_email: 'hire@templates.test',
      template: 'new-hire',
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toContain(
      'manager_name: required when manager is requested (the template new-hire leaves it to each case)',
    );
    const given = await test.post<CaseWire>('/v1/cases/', {
      subject_email: 'hire@templates.test',
      template: 'new-hire',
      manager_name: 'Pat Lead',
      manager_email: 'pat.lead@templates.test',
    });
    expect(given.status, given.text).toBe(201);
    expect(requested(given.body)).toEqual(['government_id', 'selfie', 'manager']);
    expect(given.body.verification_methods.manager?.manager_email).toBe('pat.lead@templates.test');
    const mails = await database.db.select().from(mailOutbox).where(eq(mailOutbox.caseId, given.body.id));
    expect(mails.map((mail) => mail.to)).toContain('pat.lead@templates.test');
    // A field of a method the template does not request is refused.
    const stray = await live.post<{ detail: string }>('/v1/cases/', {
      subject_email: 'hire@templates.test',
      template: 'helpdesk',
      manager_name: 'Pat Lead',
      manager_email: 'pat.lead@templates.test',
    });
    expect(stray.status).toBe(422);
    expect(stray.body.detail).toMatch(/manager_name: only accepted when manager is requested/);
  });

  it('refuses an unknown template, the other mode’s, both template and methods, and neither', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { subject_email: 'a@templates.test', template: 'nope' },
        /template: your team has no template named "nope"/,
      ],
      [
        { subject_email: 'a@templates.test', template: 'helpdesk', verification_methods: { email: true } },
        /template: give either template or verification_methods, not both/,
      ],
      [{ subject_email: 'a@templates.test' }, /verification_methods: required \(or name a template\)/],
    ];
    for (const [body, detail] of cases) {
      const res = await test.post<{ detail: string; code: string }>('/v1/cases/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(res.body.detail).toMatch(detail);
    }
    // A live template names no test case, nor a test template a live case.
    const liveOnly = await test.post<{ detail: string }>('/v1/cases/', {
      subject_email: 'a@templates.test',
      template: 'helpdesk',
    });
    expect(liveOnly.status).toBe(422);
    expect(liveOnly.body.detail).toMatch(/your team has no template named "helpdesk"/);
    expect(
      (await live.post('/v1/cases/', { subject_email: 'a@templates.test', template: 'new-hire' })).status,
    ).toBe(422);
    // Another team's template is no template of this team.
    const foreign = await stranger.post('/v1/cases/', {
      subject_email: 'a@templates.test',
      template: 'helpdesk',
    });
    expect(foreign.status).toBe(422);
  });

  it('a batch names templates item by item, each item failing alone', async () => {
    const res = await live.post<{ results: Array<{ case?: CaseWire; status?: number }> }>(
      '/v1/cases/batch/',
      {
        cases: [
          { subject_email: 'b1@templates.test', template: 'helpdesk' },
          { subject_email: 'b2@templates.test', template: 'new-hire' },
          {
            subject_email: 'b3@templates.test',
            template: 'new-hire',
            manager_name: 'P',
            manager_email: 'p@templates.test',
          },
        ],
      },
    );
    expect(res.status, res.text).toBe(200);
    // new-hire is a test template: a live batch names no such template.
    expect(res.body.results.map((r) => r.status ?? 201)).toEqual([201, 422, 422]);
    expect(requested(res.body.results[0]?.case as CaseWire)).toEqual(['email', 'sms', 'custom_question']);
  });

  it('a template’s offer_passkey goes to its cases, single and batched, unless a case gives its own', async () => {
    const made = await test.post<TemplateWire>('/v1/templates/', {
      name: 'returning-staff',
      verification_methods: { email: true },
      offer_passkey: true,
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.offer_passkey).toBe(true);
    try {
      const opened = (body: Record<string, unknown>) =>
        test.post<CaseWire>('/v1/cases/', { subject_email: 'again@templates.test', ...body });
      const inherited = await opened({ template: 'returning-staff' });
      expect(inherited.status, inherited.text).toBe(201);
      expect(inherited.body.offer_passkey).toBe(true);
      // As stored: the case read back says the same.
      expect((await test.get<CaseWire>(`/v1/cases/${inherited.body.id}/`)).body.offer_passkey).toBe(true);
      // The case's own value wins over the template's, either way.
      const declined = await opened({ template: 'returning-staff', offer_passkey: false });
      expect(declined.status, declined.text).toBe(201);
      expect(declined.body.offer_passkey).toBe(false);
      const plain = await opened({ verification_methods: { email: true } });
      expect(plain.body.offer_passkey).toBe(false);

      // In a batch, item by item.
      const batch = await test.post<{ results: Array<{ case?: CaseWire; status?: number }> }>(
        '/v1/cases/batch/',
        {
          cases: [
            { subject_email: 'w1@templates.test', template: 'returning-staff' },
            { subject_email: 'w2@templates.test', template: 'returning-staff', offer_passkey: false },
            { subject_email: 'w3@templates.test', verification_methods: { email: true } },
            {
              subject_email: 'w4@templates.test',
              verification_methods: { email: true },
              offer_passkey: true,
            },
          ],
        },
      );
      expect(batch.status, batch.text).toBe(200);
      expect(batch.body.results.map((item) => item.case?.offer_passkey)).toEqual([true, false, false, true]);

      // A template that no longer offers one: its cases do not, unless they ask.
      const changed = await test.patch<TemplateWire>(`/v1/templates/${made.body.id}/`, {
        offer_passkey: false,
      });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.body.offer_passkey).toBe(false);
      expect((await opened({ template: 'returning-staff' })).body.offer_passkey).toBe(false);
      expect((await opened({ template: 'returning-staff', offer_passkey: true })).body.offer_passkey).toBe(
        true,
      );
    } finally {
      // The console's test below lists the team's templates.
      expect((await test.delete(`/v1/templates/${made.body.id}/`)).status).toBe(204);
    }
  });

  it('a deleted template names no case any more; cases already opened keep what they started with', async () => {
    const opened = await test.post<CaseWire>('/v1/cases/', {
      subject_email: 'kept@templates.test',
      template: 'new-hire',
      manager_name: 'P',
      manager_email: 'p@templates.test',
    });
    expect(opened.status, opened.text).toBe(201);
    expect((await live.delete(`/v1/templates/${newHire.id}/`)).status).toBe(404);
    expect((await test.delete(`/v1/templates/${newHire.id}/`)).status).toBe(204);
    expect((await test.get(`/v1/templates/${newHire.id}/`)).status).toBe(404);
    const after = await test.post('/v1/cases/', {
      subject_email: 'late@templates.test',
      template: 'new-hire',
    });
    expect(after.status).toBe(422);
    const kept = await test.get<CaseWire>(`/v1/cases/${opened.body.id}/`);
    expect(requested(kept.body)).toEqual(['government_id', 'selfie', 'manager']);
  });
});

describe('templates in the console', () => {
  it('every member reads them; owners and admins change them, viewers are refused', async () => {
    const listed = await viewer.query<{ results: TemplateWire[] }>('console.templates.list');
    expect(listed.status).toBe(200);
    expect(listed.data?.results.map((t) => t.name)).toEqual(['helpdesk']);
    // The Test data switch shows the test templates, and the list can name a mode outright.
    viewer.setCookie('vouch_mode', 'test');
    const testListed = await viewer.query<{ results: TemplateWire[] }>('console.templates.list');
    expect(testListed.data?.results.map((t) => t.name)).toEqual([]);
    viewer.setCookie('vouch_mode', 'live');
    const named = await viewer.query<{ results: TemplateWire[] }>('console.templates.list', { mode: 'live' });
    expect(named.data?.results.map((t) => t.name)).toEqual(['helpdesk']);
    const refused = await viewer.mutate('console.templates.create', {
      name: 'viewer-made',
      verification_methods: { email: true },
    });
    expect(refused.status).toBe(403);
    const made = await owner.mutate<TemplateWire>('console.templates.create', {
      name: 'console-made',
      verification_methods: { email: true },
    });
    expect(made.status).toBe(200);
    const gone = await owner.mutate('console.templates.delete', { id: made.data?.id });
    expect(gone.status).toBe(200);
    const actors = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, made.data?.id ?? ''), eq(auditLog.teamId, teamId)))
      .orderBy(auditLog.createdAt);
    expect(actors.map((row) => [row.action, row.actorEmail])).toEqual([
      ['template.created', 'owner@templates.test'],
      ['template.deleted', 'owner@templates.test'],
    ]);
  });
});

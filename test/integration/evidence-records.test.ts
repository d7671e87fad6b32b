/**
 * Evidence records (issue 29) in the running service: GET /v1/cases/{id}/evidence/ signs a record
 * of the case when asked for; it verifies against /.well-known/jwks.json (with jose, with the CLI,
 * with the /docs guide's snippet), one changed byte fails naming what, records keep verifying after
 * a key rotation, a redacted case's record holds no personal value (its HMACs check with the
 * team's evidence key), the console's PDF carries the signed record, and only the case's team and
 * mode may have it, every download audited.
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fontkit from '@pdf-lib/fontkit';
import { and, eq } from 'drizzle-orm';
import { base64url, createLocalJWKSet, flattenedVerify, type JWK } from 'jose';
import { decodePDFRawStream, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '@/db/schema';
import { renderEvidencePdf } from '@/server/evidence/evidence-pdf';
import { pdfAttachments } from '@/server/evidence/pdf-attachment';
import type { EvidenceRecord } from '@/server/evidence/record-format';
import { verifyEvidence } from '@/server/evidence/verify-evidence';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import {
  type ConsoleClient,
  consoleClient,
  runCli,
  runCliProcess,
  signInReplacingPassword,
} from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { inviteNewUser } from '@/test/support/invitations';
import { RFC8785_VECTORS, rfc8785 } from '@/test/support/rfc8785';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

const SECRET = 'an-evidence-signing-secret-of-32-characters';
let database: TestDatabase;
let app: RunningApp;
let teamId: string;
let test: ReturnType<typeof apiClient>;
let live: ReturnType<typeof apiClient>;
let stranger: ReturnType<typeof apiClient>;
let owner: ConsoleClient;
let viewer: ConsoleClient;
let work: string;

const cliEnv = () => ({ DATABASE_URL: database.url, KEYS_SECRET: SECRET });

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: { KEYS_SECRET: SECRET, JOB_TICK_SECONDS: '1' },
  });
  const created = await createTeam(
    database.db,
    { name: 'Evidence Corp', adminEmail: 'owner@evidence.test' },
    systemClock,
  );
  teamId = created.team.id;
  test = apiClient(app.baseUrl, created.testKey.token);
  live = apiClient(app.baseUrl, created.key.token);
  const other = await createTeam(database.db, { name: 'Other', adminEmail: 'o@other.test' }, systemClock);
  stranger = apiClient(app.baseUrl, other.testKey.token);
  owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@evidence.test',
    created.owner.oneTimePassword,
    'evidence-owner-password-1',
  );
  viewer = consoleClient(app.baseUrl);
  await inviteNewUser(owner, viewer, database.db, { email: 'viewer@evidence.test', role: 'viewer' });
  // The console shows test-mode data, where the cases below are.
  owner.setCookie('vouch_mode', 'test');
  viewer.setCookie('vouch_mode', 'test');
  work = mkdtempSync(path.join(tmpdir(), 'vouch-evidence-'));
}, 120_000);

afterAll(async () => {
  if (process.env.SHOW_LOGS) console.log(app?.logs());
  await app?.stop();
  await database?.close();
});

interface CaseWire {
  id: string;
  public_id: string;
  verification_url: string;
  status: string;
}

const PHONE = '+447400123456';
const SUBJECT = 'layla.hassan@evidence.test';
const NAME = 'ليلى الحسن 山田花子 Zoë';
const MANAGER = 'mia.manager@evidence.test';
const ANSWER = 'the blue door';

/** A test case with every method, completed as a subject and a manager would (SMS and ID through the page). */
async function closedCase(): Promise<CaseWire> {
  const created = await test.post<CaseWire>('/v1/cases/', {
    subject_email: SUBJECT,
    subject_name: NAME,
    verification_methods: {
      email: true,
      sms: true,
      government_id: true,
      custom_question: true,
      manager: true,
    },
    custom_question_text: 'Which door?',
    custom_question_answer: ANSWER,
    manager_name: 'Mia Manager',
    manager_email: MANAGER,
  });
  expect(created.status, created.text).toBe(201);
  const url = created.body.verification_url;
  const page = await openSubjectPage(url);
  const sent = await postSubjectForm(`${url}/sms`, page, { action: 'send', phone: PHONE });
  expect(sent.headers.get('location')).toContain('n=sms-sent');
  const wrong = await postSubjectForm(`${url}/sms`, page, { action: 'verify', code: '111111' });
  expect(wrong.status).toBe(303);
  const right = await postSubjectForm(`${url}/sms`, page, { action: 'verify', code: '000000' });
  expect(right.headers.get('location')).toContain('n=sms-verified');
  // The simulated ID check, through the page's upload form.
  const upload = page.html.match(/action="([^"]*\/identity\?csrf=[^"]+)"/)?.[1]?.replaceAll('&amp;', '&');
  expect(upload).toBeDefined();
  const form = new FormData();
  const png = (marker: string) =>
    new Blob([Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(marker)])]);
  form.append('document', png('document'), 'id.png');
  form.append('selfie', png('selfie'), 'selfie.png');
  const checked = await fetch(`${app.baseUrl}${upload}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Sec-Fetch-Site': 'same-origin', Cookie: page.cookie },
    body: form,
  });
  expect(checked.status).toBe(303);
  for (const step of ['email', 'custom_question', 'manager']) {
    const done = await test.post(`/v1/cases/${created.body.id}/simulate/`, {
      action: 'complete_step',
      method: step,
    });
    expect(done.status, done.text).toBe(200);
  }
  const after = await test.get<CaseWire>(`/v1/cases/${created.body.id}/`);
  expect(after.body.status).toBe('closed');
  return after.body;
}

/** Waits until the worker has sealed every audit entry of the team. */
async function sealed(): Promise<void> {
  await eventually(async () => {
    const rows = await database.db.select().from(auditLog).where(eq(auditLog.teamId, teamId));
    return rows.every((row) => row.hash !== null) ? true : undefined;
  }, 20_000);
}

async function jwks(): Promise<JWK[]> {
  return ((await (await fetch(`${app.baseUrl}/.well-known/jwks.json`)).json()) as { keys: JWK[] }).keys;
}

async function evidence(caseId: string, client = test) {
  const res = await client.get<Record<string, string>>(`/v1/cases/${caseId}/evidence/`);
  return res;
}

function payloadOf(text: string): EvidenceRecord {
  return JSON.parse(new TextDecoder().decode(base64url.decode(JSON.parse(text).payload))) as EvidenceRecord;
}

/** The fonts a PDF embeds, with how many of their glyphs decode to an outline, and how many fail to decode. */
function embeddedFonts(doc: PDFDocument): Array<{ name: string; outlined: number; broken: number }> {
  return doc.context.enumerateIndirectObjects().flatMap(([, object]) => {
    if (!(object instanceof PDFDict)) return [];
    const file = object.lookup(PDFName.of('FontFile2'));
    if (!(file instanceof PDFRawStream)) return [];
    const font = fontkit.create(Buffer.from(decodePDFRawStream(file).decode())) as unknown as {
      numGlyphs: number;
      getGlyph: (id: number) => { path: { commands: unknown[] } };
    };
    let outlined = 0;
    let broken = 0;
    for (let id = 1; id < font.numGlyphs; id += 1) {
      try {
        if (font.getGlyph(id).path.commands.length > 0) outlined += 1;
      } catch {
        broken += 1;
      }
    }
    return [{ name: String(object.lookup(PDFName.of('FontName'))), outlined, broken }];
  });
}

/** Every string anywhere in a JSON value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

let closed: CaseWire;
let signedText: string;

describe('GET /v1/cases/{id}/evidence/', () => {
  it('signs a record of the case that verifies against the published keys and says what was checked', async () => {
    closed = await closedCase();
    await sealed();
    const res = await evidence(closed.id);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jose+json');
    signedText = res.text;

    const { payload, protectedHeader } = await flattenedVerify(
      JSON.parse(res.text),
      createLocalJWKSet({ keys: await jwks() }),
      { algorithms: ['EdDSA'] },
    );
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'vouch-evidence+json' });
    const text = new TextDecoder().decode(payload);
    const record = JSON.parse(text) as EvidenceRecord;
    // The payload is the record's RFC 8785 canonical JSON, as the test's own canonicalizer (checked
    // against the RFC's examples) writes it, not only as the product's library does.
    for (const vector of RFC8785_VECTORS) expect(rfc8785(vector.input)).toBe(vector.output);
    expect(rfc8785(record)).toBe(text);
    expect(record).toMatchObject({
      type: 'vouch.evidence_record',
      version: 1,
      issuer: app.baseUrl,
      kid: protectedHeader?.kid,
      provisional: false,
      case: {
        id: closed.id,
        public_id: closed.public_id,
        team_id: teamId,
        livemode: false,
        status: 'closed',
        failure_reason: null,
        methods: ['email', 'sms', 'government_id', 'selfie', 'custom_question', 'manager'],
        subject_email: SUBJECT,
        redacted_at: null,
      },
    });
    expect(record.case.ended_at).toEqual(expect.any(String));
    const step = (method: string) => record.steps.find((s) => s.method === method);
    expect(step('email')).toMatchObject({ outcome: 'verified', evidence: { confirmed_email: SUBJECT } });
    expect(step('sms')).toMatchObject({
      outcome: 'verified',
      attempts: 1,
      evidence: { phone_country: 'GB', phone_last4: '3456' },
    });
    // The simulated document shows the name the case expects; the record says it was compared.
    expect(step('government_id')?.evidence).toEqual({
      vendor_session_id: null,
      vendor_report_id: expect.stringMatching(/^simchk_[0-9a-f]{24}$/),
      document_name: NAME,
      name_check: 'matched',
      name_match: 'enforce',
    });
    expect(step('manager')?.evidence).toEqual({ manager_email: MANAGER, decision: 'confirmed' });
    expect(step('custom_question')).toMatchObject({ outcome: 'verified', evidence: {} });
    for (const s of record.steps) expect(s.decided_at).toEqual(expect.any(String));
    // The custom question's answer, and the full phone number, are nowhere in it.
    expect(text).not.toContain(ANSWER);
    expect(text).not.toContain(PHONE);

    // Each event with the SHA-256 of its body exactly as the events API serves it (and webhooks carry it).
    expect(record.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['case.created', 'verification.step_completed', 'case.closed']),
    );
    for (const event of record.events) {
      const served = await test.get(`/v1/events/${event.id}/`);
      expect(served.status).toBe(200);
      expect(event.body_sha256).toBe(createHash('sha256').update(served.text).digest('hex'));
    }
    // Its audit entries as the chain sealed them.
    expect(record.audit.pending).toEqual([]);
    expect(record.audit.entries.map((e) => e.entry.action)).toContain('case.created');
    expect(record.audit.sealed_through).toBe(record.audit.entries.at(-1)?.seq);
    // Each entry's hash is SHA-256 of the RFC 8785 form of {seq, prev, entry}, recomputed here.
    for (const item of record.audit.entries) {
      expect(item.hash).toBe(
        createHash('sha256')
          .update(rfc8785({ seq: item.seq, prev: item.prev_hash, entry: item.entry }))
          .digest('hex'),
      );
    }
    expect(await verifyEvidence(res.text, await jwks())).toMatchObject({ ok: true });
  });

  it('gives two records of an ended case that differ only in issued_at and kid, and audits each download', async () => {
    const before = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, closed.id), eq(auditLog.action, 'case.evidence_downloaded')));
    await sealed();
    const again = await evidence(closed.id);
    expect(again.status).toBe(200);
    const { issued_at: firstAt, kid: _k1, ...first } = payloadOf(signedText);
    const { issued_at: secondAt, kid: _k2, ...second } = payloadOf(again.text);
    expect(second).toEqual(first);
    expect(secondAt > firstAt).toBe(true);
    const after = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, closed.id), eq(auditLog.action, 'case.evidence_downloaded')));
    expect(after.length).toBe(before.length + 1);
    expect(after.at(-1)?.details).toMatchObject({ format: 'json', livemode: false });
  });

  it('marks an open case’s record provisional', async () => {
    const open = await test.post<CaseWire>('/v1/cases/', {
      subject_email: 'open@evidence.test',
      verification_methods: { email: true },
    });
    expect(open.status).toBe(201);
    const res = await evidence(open.body.id);
    expect(res.status).toBe(200);
    const record = payloadOf(res.text);
    expect(record.provisional).toBe(true);
    expect(record.case.ended_at).toBeNull();
    expect(record.steps).toEqual([
      {
        method: 'email',
        outcome: 'pending',
        decided_at: null,
        attempts: 0,
        evidence: { confirmed_email: null },
      },
    ]);
  });

  it('answers only the case’s own team in the case’s mode: 404 to another team and to the other mode', async () => {
    expect((await evidence(closed.id, stranger)).status).toBe(404);
    expect((await evidence(closed.id, live)).status).toBe(404);
    expect((await evidence('not-a-case', test)).status).toBe(404);
  });

  it('is published in the OpenAPI document as application/jose+json', async () => {
    const document = await test.get<{
      paths: Record<string, { get?: { responses: Record<string, { content: object }> } }>;
    }>('/v1/openapi.json');
    expect(
      Object.keys(document.body.paths['/v1/cases/{id}/evidence/']?.get?.responses['200']?.content ?? {}),
    ).toEqual(['application/jose+json']);
  });
});

describe('evidence verify (the operator CLI, offline)', () => {
  it('exits 0 printing what the record proves, with the key set from a file, a URL or the issuer', async () => {
    const file = path.join(work, 'record.json');
    writeFileSync(file, signedText);
    const keysFile = path.join(work, 'jwks.json');
    writeFileSync(keysFile, JSON.stringify({ keys: await jwks() }));
    // No database: the command reads files only.
    const offline = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    const run = await runCliProcess(['evidence', 'verify', file, '--jwks', keysFile], offline);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('The evidence record verifies');
    expect(run.out).toContain(`Case ${closed.id} (${closed.public_id})`);
    expect(run.out).toContain('Step sms: verified');
    expect(JSON.parse(run.out.trim().split('\n').at(-1) ?? '')).toMatchObject({
      ok: true,
      case_id: closed.id,
      status: 'closed',
      provisional: false,
    });
    expect(
      await runCli(['evidence', 'verify', file, '--jwks', `${app.baseUrl}/.well-known/jwks.json`], offline),
    ).toMatchObject({ ok: true });
    // Without --jwks: the keys of the service BASE_URL names, for its own records only. Never the
    // keys a record points to itself (a forger's would be there).
    expect(await runCli(['evidence', 'verify', file], { ...offline, BASE_URL: app.baseUrl })).toMatchObject({
      ok: true,
    });
    const elsewhere = await runCliProcess(['evidence', 'verify', file], {
      ...offline,
      BASE_URL: 'https://vouch.example.com',
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.err).toMatch(
      /issuer: it says it was issued by http:\/\/localhost:\d+, not by https:\/\/vouch.example.com/,
    );
    const anchorless = await runCliProcess(['evidence', 'verify', file], offline);
    expect(anchorless.code).toBe(1);
    expect(anchorless.err).toMatch(/give --jwks FILE\|URL/);
  });

  it('fails on one changed byte anywhere, naming what failed', async () => {
    const keys = await jwks();
    const jws = JSON.parse(signedText) as Record<string, string>;
    const flip = (segment: string, at: number) =>
      segment.slice(0, at) + (segment[at] === 'A' ? 'B' : 'A') + segment.slice(at + 1);
    for (const member of ['payload', 'protected', 'signature'] as const) {
      const value = jws[member] ?? '';
      for (const at of [0, Math.floor(value.length / 2), value.length - 2]) {
        const changed = JSON.stringify({ ...jws, [member]: flip(value, at) });
        const check = await verifyEvidence(changed, keys);
        expect(check.ok, `${member}[${at}]`).toBe(false);
        if (!check.ok) expect(['signature', 'protected header', 'key']).toContain(check.part);
      }
    }
    expect(await verifyEvidence(signedText.replace('{', '['), keys)).toMatchObject({
      ok: false,
      part: 'file',
    });
    // Through the CLI: exit 1 naming the signature.
    const file = path.join(work, 'changed.json');
    writeFileSync(file, JSON.stringify({ ...jws, payload: flip(jws.payload ?? '', 40) }));
    const run = await runCliProcess(
      ['evidence', 'verify', file, '--jwks', `${app.baseUrl}/.well-known/jwks.json`],
      {},
    );
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/does not verify: signature: it does not verify with key/);
    // A key the set does not hold.
    const unknownKey = await verifyEvidence(
      signedText,
      keys.filter(
        (key) => key.kid !== JSON.parse(new TextDecoder().decode(base64url.decode(jws.protected ?? ''))).kid,
      ),
    );
    expect(unknownKey).toMatchObject({ ok: false, part: 'key' });
  });

  it('names an audit entry whose hash does not match its content and stated predecessor', async () => {
    const other = await test.post<CaseWire>('/v1/cases/', {
      subject_email: 'tampered@evidence.test',
      verification_methods: { email: true },
    });
    expect(other.status).toBe(201);
    await sealed();
    const [entry] = await database.db.select().from(auditLog).where(eq(auditLog.target, other.body.id));
    // Someone with the database rewrites what the sealed entry says, keeping its hash.
    await database.db
      .update(auditLog)
      .set({ sealed: { ...(entry?.sealed ?? {}), action: 'case.canceled' } })
      .where(eq(auditLog.id, entry?.id ?? ''));
    const res = await evidence(other.body.id);
    expect(res.status).toBe(200);
    expect(await verifyEvidence(res.text, await jwks())).toEqual({
      ok: false,
      part: `audit entry ${entry?.chainSeq}`,
      reason: 'its hash does not match its content and stated predecessor',
    });
    // Put back, so the team's chain stays whole for the tests that follow.
    await database.db
      .update(auditLog)
      .set({ sealed: entry?.sealed })
      .where(eq(auditLog.id, entry?.id ?? ''));
  });
});

describe('key rotation', () => {
  it('old records keep verifying; new ones carry the new key id', async () => {
    const oldKid = payloadOf(signedText).kid;
    const rotated = await runCli(['keys', 'signing-rotate'], cliEnv());
    expect(rotated.kid).not.toBe(oldKid);
    const keys = await jwks();
    expect(await verifyEvidence(signedText, keys)).toMatchObject({ ok: true, kid: oldKid });
    const fresh = await evidence(closed.id);
    expect(payloadOf(fresh.text).kid).toBe(rotated.kid);
    expect(await verifyEvidence(fresh.text, keys)).toMatchObject({ ok: true, kid: rotated.kid });
  });
});

describe('key revocation (keys signing-revoke)', () => {
  it('withdraws the key at once: its records fail saying it was revoked, the team is told, the next record carries a new key', async () => {
    const record = await evidence(closed.id);
    const kid = payloadOf(record.text).kid;
    const revoked = await runCli(
      // `--kid=…`: a kid (base64url) may begin with `-`, which would read as an option.
      ['keys', 'signing-revoke', `--kid=${kid}`, '--reason', 'key compromised'],
      cliEnv(),
    );
    expect(revoked).toMatchObject({ kid, alg: 'EdDSA', was_current: true, revoked: true });
    const set = (await (await fetch(`${app.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: JWK[];
      revoked: Array<{ kid: string; revoked_at: string; reason: string }>;
    };
    expect(set.keys.map((key) => key.kid)).not.toContain(kid);
    expect(set.revoked).toEqual(
      expect.arrayContaining([
        { kid, alg: 'EdDSA', revoked_at: expect.any(String), reason: 'key compromised' },
      ]),
    );
    // Verified offline against the published set: it fails naming the revocation, not an unknown key.
    const file = path.join(work, 'revoked.json');
    writeFileSync(file, record.text);
    const run = await runCliProcess(
      ['evidence', 'verify', file, '--jwks', `${app.baseUrl}/.well-known/jwks.json`],
      {},
    );
    expect(run.code).toBe(1);
    expect(run.err).toMatch(
      new RegExp(
        `does not verify: key: it was signed with key ${kid}, which its issuer revoked at .* \\(key compromised\\)`,
      ),
    );
    // The team that downloaded records it signed is told in its audit log, by the operator.
    const told = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'signing_key.revoked'), eq(auditLog.target, kid)));
    expect(told).toHaveLength(1);
    expect(told[0]?.actorEmail).toBe('Vouch operator (CLI)');
    expect(told[0]?.details).toMatchObject({
      alg: 'EdDSA',
      reason: 'key compromised',
      evidence_records_signed: expect.any(Number),
    });
    // A new record is signed with a new key, and verifies.
    const fresh = await evidence(closed.id);
    expect(payloadOf(fresh.text).kid).not.toBe(kid);
    expect(await verifyEvidence(fresh.text, await jwks())).toMatchObject({ ok: true });
    // An unknown or already revoked key is refused, naming it.
    const again = await runCliProcess(['keys', 'signing-revoke', `--kid=${kid}`], cliEnv());
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/revoked already/);
  });
});

describe('after redaction', () => {
  it('old records verify, and a new one holds no personal value, only HMACs the evidence key checks', async () => {
    const before = await evidence(closed.id);
    const redacted = await test.post(`/v1/cases/${closed.id}/redact/`);
    expect(redacted.status).toBe(200);
    await sealed();
    const keys = await jwks();
    expect(await verifyEvidence(before.text, keys)).toMatchObject({ ok: true });
    const after = await evidence(closed.id);
    expect(after.status).toBe(200);
    const check = await verifyEvidence(after.text, keys);
    expect(check).toMatchObject({ ok: true });
    const record = payloadOf(after.text);
    expect(record.case.redacted_at).toEqual(expect.any(String));

    // No string anywhere is, or holds, a personal value (short ones: no string is exactly one).
    const personal = [SUBJECT, NAME, 'Sam Sample', MANAGER, PHONE, ANSWER, 'Mia Manager'];
    for (const value of strings(record)) {
      for (const p of personal) expect(value, `"${value}" holds "${p}"`).not.toContain(p);
      expect(value).not.toBe('3456');
      expect(value).not.toBe('7911123456');
    }

    // The owner hands the evidence key to the auditor, who checks the values they hold.
    const revealed = await owner.mutate<{ evidence_key: string }>('console.audit.evidenceKey');
    expect(revealed.status).toBe(200);
    const key = Buffer.from(revealed.data?.evidence_key ?? '', 'base64url');
    const keyed = (value: string) => `hmac:${createHmac('sha256', key).update(value).digest('base64url')}`;
    const step = (method: string) => record.steps.find((s) => s.method === method);
    expect(record.case.subject_email).toBe(keyed(SUBJECT));
    expect(step('email')?.evidence.confirmed_email).toBe(keyed(SUBJECT));
    expect(step('sms')?.evidence).toEqual({ phone_country: 'GB', phone_last4: keyed('3456') });
    expect(step('manager')?.evidence).toEqual({ manager_email: keyed(MANAGER), decision: 'confirmed' });
    expect(step('government_id')?.evidence.vendor_report_id).toMatch(/^simchk_/);
    // The rest of the record is what it was.
    const {
      issued_at: _a,
      kid: _b,
      case: beforeCase,
      steps: _s,
      audit: beforeAudit,
      ...rest
    } = payloadOf(before.text);
    const { issued_at: _c, kid: _d, case: afterCase, steps: _t, audit: afterAudit, ...restAfter } = record;
    expect(restAfter.events.slice(0, rest.events.length)).toEqual(rest.events);
    expect(afterCase.status).toBe(beforeCase.status);
    expect(afterAudit.entries.slice(0, beforeAudit.entries.length)).toEqual(beforeAudit.entries);
  });

  it('only owners see the evidence key, and each reveal is audited', async () => {
    const refused = await viewer.mutate('console.audit.evidenceKey');
    expect(refused.status).toBe(403);
    const reveals = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.action, 'team.evidence_key_revealed')));
    expect(reveals.map((row) => row.actorEmail)).toEqual(['owner@evidence.test']);
  });
});

describe('the console’s downloads', () => {
  it('a viewer downloads the PDF: it opens, prints the names in their scripts, and its attachment verifies', async () => {
    const other = await test.post<CaseWire>('/v1/cases/', {
      subject_email: 'pdf@evidence.test',
      subject_name: NAME,
      verification_methods: { email: true },
    });
    expect(other.status).toBe(201);
    const answer = await viewer.mutate<{ file_name: string; media_type: string; content_base64: string }>(
      'console.cases.evidence',
      { id: other.body.id, format: 'pdf' },
    );
    expect(answer.status, JSON.stringify(answer.error)).toBe(200);
    expect(answer.data?.file_name).toBe(`evidence-${other.body.public_id}.pdf`);
    expect(answer.data?.media_type).toBe('application/pdf');
    const bytes = Buffer.from(answer.data?.content_base64 ?? '', 'base64');
    const doc = await PDFDocument.load(bytes);
    expect(doc.getPageCount()).toBeGreaterThanOrEqual(1);
    expect(doc.getTitle()).toBe(`Evidence record — case ${other.body.public_id}`);
    // The Arabic, Japanese and Latin names are set in fonts embedded for them, whose every glyph
    // decodes to an outline (a broken subset decodes to nothing, or fails).
    const fonts = embeddedFonts(doc);
    const distinct = (text: string) => new Set(text.replace(/ /g, '')).size;
    expect(fonts.find((f) => f.name.includes('NotoSansArabic'))?.outlined).toBeGreaterThanOrEqual(
      distinct('ليلى الحسن'),
    );
    expect(fonts.find((f) => f.name.includes('NotoSansJP'))?.outlined).toBeGreaterThanOrEqual(
      distinct('山田花子'),
    );
    expect(fonts.find((f) => f.name.includes('NotoSans-Regular'))?.outlined).toBeGreaterThanOrEqual(26);
    for (const font of fonts) expect(font.broken, font.name).toBe(0);

    const attached = await pdfAttachments(bytes);
    const signed = new TextDecoder().decode(attached.get(`evidence-${other.body.public_id}.json`));
    const check = await verifyEvidence(signed, await jwks());
    expect(check).toMatchObject({ ok: true });
    if (check.ok) expect(check.record.case.subject_name).toBe(NAME);

    // The CLI verifies the PDF itself.
    const file = path.join(work, answer.data?.file_name ?? 'x.pdf');
    writeFileSync(file, bytes);
    const run = await runCliProcess(['evidence', 'verify', file], { BASE_URL: app.baseUrl });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`Case ${other.body.id}`);
    // It says plainly that the pages are a rendering, not what was verified.
    expect(run.out).toContain(
      `What was verified is the record attached to the PDF (evidence-${other.body.public_id}.json), not its printed pages`,
    );

    // The attack: pages (and the PDF's own description) of this case with another case's genuine
    // record attached. The record verifies; the PDF does not hold its own case's record.
    const swapped = await renderEvidencePdf({
      record: payloadOf(signed),
      signed: signedText,
      teamName: 'Evidence Co',
    });
    const swappedFile = path.join(work, 'swapped.pdf');
    writeFileSync(swappedFile, swapped);
    const refused = await runCliProcess(['evidence', 'verify', swappedFile], { BASE_URL: app.baseUrl });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      new RegExp(
        `the evidence PDF does not hold its own case's record: the attached record is named evidence-${other.body.public_id}.json, but it is the record of case ${closed.public_id}`,
      ),
    );

    // The JSON download is the same signed record the API serves; both were audited as the viewer's.
    const json = await viewer.mutate<{ content_base64: string; media_type: string }>(
      'console.cases.evidence',
      {
        id: other.body.id,
        format: 'json',
      },
    );
    expect(json.data?.media_type).toBe('application/jose+json');
    expect(
      await verifyEvidence(Buffer.from(json.data?.content_base64 ?? '', 'base64').toString(), await jwks()),
    ).toMatchObject({ ok: true });
    const downloads = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.target, other.body.id), eq(auditLog.action, 'case.evidence_downloaded')))
      .orderBy(auditLog.createdAt);
    expect(downloads.map((row) => [row.actorEmail, row.details.format])).toEqual([
      ['viewer@evidence.test', 'pdf'],
      ['viewer@evidence.test', 'json'],
    ]);
  });
});

describe('the /docs guide', () => {
  it('its jose verifier checks a real record, and refuses a changed one', async () => {
    const guide = readFileSync(path.join(process.cwd(), 'docs', 'guides', '4-evidence-records.md'), 'utf8');
    const snippet = [...guide.matchAll(/```js\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? '')
      .find((code) => code.includes('verifyEvidenceRecord'));
    expect(snippet).toBeDefined();
    // Inside the project, so that `import 'jose'` finds the package as it would in a reader's project.
    const folder = mkdtempSync(path.join(process.cwd(), 'node_modules', '.vouch-guide-'));
    const file = path.join(folder, 'verify-evidence.mjs');
    writeFileSync(file, (snippet ?? '').replaceAll('{base_url}', app.baseUrl));
    const { verifyEvidenceRecord } = (await import(pathToFileURL(file).href)) as {
      verifyEvidenceRecord: (signed: string) => Promise<EvidenceRecord>;
    };
    const record = await verifyEvidenceRecord(signedText);
    expect(record.case.id).toBe(closed.id);
    const jws = JSON.parse(signedText) as Record<string, string>;
    const signature = jws.signature ?? '';
    const changed = JSON.stringify({
      ...jws,
      signature: `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`,
    });
    await expect(verifyEvidenceRecord(changed)).rejects.toThrow();
  });
});

/**
 * A re-verification by passkey over HTTP, against the built service: the API refuses a case for a
 * subject who holds none; the page shows the passkey panel with its one script (and says what to
 * do without it); the ceremony's two requests pass the form's checks, take a body of a browser's
 * size only and a case's budget only, and a software authenticator's answer closes the case. The
 * closed page's enrollment takes the same limits: an attestation of a browser's size only, and
 * its two requests out of the same budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { PASSKEY_CEREMONIES_PER_CASE } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { relyingPartyOf } from '@/server/verification/methods/passkey/ceremonies';
import { PASSKEY_SCRIPT_PATH } from '@/server/verification/methods/passkey/page-script';
import { PASSKEY_BODY_LIMIT_BYTES } from '@/server/verification/methods/passkey/routes/passkey-ceremony';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { enrollPasskey } from '@/test/support/passkeys';
import { SoftwareAuthenticator } from '@/test/support/software-authenticator';

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;
let authenticator: SoftwareAuthenticator;
let teamId: string;
/** The subject's first case: the ID check their passkey leads back to. */
let idCheckCaseId: string;

interface CaseBody {
  id: string;
  public_id: string;
  status: string;
  verification_methods: {
    passkey: { verified: boolean; passkey_id: string | null; enrolling_case_id: string | null };
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const team = await createTeam(database.db, { name: 'Desk', adminEmail: 'admin@desk.test' }, systemClock);
  teamId = team.team.id;
  api = apiClient(app.baseUrl, team.testKey.token);
  // The subject's first case: an ID check, passed (test mode), which saves a passkey.
  const first = await api.post<CaseBody>('/v1/cases/', {
    subject_email: 'returning@desk.test',
    verification_methods: { government_id: true },
  });
  expect(first.status).toBe(201);
  const passed = await api.post<CaseBody>(`/v1/cases/${first.body.id}/simulate/`, {
    action: 'complete_step',
    method: 'government_id',
  });
  expect(passed.body.status).toBe('closed');
  idCheckCaseId = first.body.id;
  // Saved as the closed page's ceremony saves one, for the pages' own relying party.
  const party = relyingPartyOf(app.baseUrl);
  const ceremony = { caseId: first.body.id, teamId, livemode: false, subjectEmail: 'returning@desk.test' };
  const saved = await enrollPasskey(database.db, ceremony, systemClock, party);
  authenticator = saved.authenticator;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function reverification(): Promise<CaseBody> {
  const created = await api.post<CaseBody>('/v1/cases/', {
    subject_email: 'returning@desk.test',
    verification_methods: { passkey: true },
  });
  expect(created.status).toBe(201);
  return created.body;
}

/**
 * A case that offers its subject a passkey once closed: its e-mail step passed (test mode), so
 * its page is the closed page with the offer.
 */
async function offeringCase(subjectEmail = 'offered@desk.test'): Promise<CaseBody> {
  const created = await api.post<CaseBody>('/v1/cases/', {
    subject_email: subjectEmail,
    verification_methods: { email: true },
    offer_passkey: true,
  });
  expect(created.status, created.text).toBe(201);
  const closed = await api.post<CaseBody>(`/v1/cases/${created.body.id}/simulate/`, {
    action: 'complete_step',
    method: 'email',
  });
  expect(closed.body.status).toBe('closed');
  return closed.body;
}

/** The case's page as a browser opens it: its cookie, and the token the passkey panel carries. */
async function openPage(publicId: string) {
  const res = await fetch(`${app.baseUrl}/v/${publicId}`);
  const html = await res.text();
  return {
    html,
    cookie: res.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; '),
    token: html.match(/data-token="([^"]+)"/)?.[1] ?? '',
  };
}

type Page = Awaited<ReturnType<typeof openPage>>;
type CeremonyStep = 'options' | 'answer' | 'enroll-options' | 'enroll';

function ceremonyPost(
  publicId: string,
  step: CeremonyStep,
  page: Page,
  body: string,
  headers: Record<string, string> = {},
) {
  return fetch(`${app.baseUrl}/v/${publicId}/passkey/${step}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Sec-Fetch-Site': 'same-origin',
      Cookie: page.cookie,
      'X-CSRF-Token': page.token,
      ...headers,
    },
    body,
  });
}

describe('creating a case with passkey', () => {
  it('is refused with PASSKEY_NOT_ENROLLED for a subject who holds none', async () => {
    const refused = await api.post<{ code: string; detail: string }>('/v1/cases/', {
      subject_email: 'newcomer@desk.test',
      verification_methods: { passkey: true },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('PASSKEY_NOT_ENROLLED');
    // In a batch, the item alone.
    const batch = await api.post<{ results: Array<{ status?: number; case?: unknown }> }>(
      '/v1/cases/batch/',
      {
        cases: [
          { subject_email: 'newcomer@desk.test', verification_methods: { passkey: true } },
          { subject_email: 'returning@desk.test', verification_methods: { passkey: true } },
        ],
      },
    );
    expect(batch.body.results.map((item) => item.status ?? 201)).toEqual([422, 201]);
  });
});

describe('the re-verification page', () => {
  it('shows the passkey panel with its script, and words for a browser that cannot run it', async () => {
    const record = await reverification();
    const page = await openPage(record.public_id);
    expect(page.html).toContain('data-passkey="prove"');
    expect(page.html).toContain(`<script src="${PASSKEY_SCRIPT_PATH}" defer data-page-script>`);
    expect(page.html).toContain('it needs JavaScript and passkey support');
    // A page without a passkey ceremony loads no passkey script.
    const plain = await api.post<CaseBody>('/v1/cases/', {
      subject_email: 'other@desk.test',
      verification_methods: { email: true },
    });
    expect((await openPage(plain.body.public_id)).html).not.toContain(PASSKEY_SCRIPT_PATH);
  });

  it('serves the script, the browser package and ours, under 8 KB gzipped', async () => {
    const script = await fetch(`${app.baseUrl}${PASSKEY_SCRIPT_PATH}`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-encoding')).toBe('gzip');
    const gzipped = Number(script.headers.get('content-length'));
    expect(gzipped).toBeGreaterThan(1000);
    expect(gzipped).toBeLessThanOrEqual(8 * 1024);
    const body = await fetch(`${app.baseUrl}${PASSKEY_SCRIPT_PATH}`).then((res) => res.text());
    expect(body).toContain('SimpleWebAuthnBrowser');
    expect(body).toContain('X-CSRF-Token');
  });

  it('closes the case when the passkey answers its challenge', async () => {
    const record = await reverification();
    const page = await openPage(record.public_id);
    const options = await ceremonyPost(record.public_id, 'options', page, '{}');
    expect(options.status).toBe(200);
    const { options: challenge } = (await options.json()) as {
      options: { challenge: string; rpId: string; userVerification: string; allowCredentials: unknown[] };
    };
    expect(challenge.rpId).toBe('localhost');
    expect(challenge.userVerification).toBe('required');
    expect(challenge.allowCredentials).toHaveLength(1);

    const response = authenticator.authenticate(challenge.challenge);
    const answer = await ceremonyPost(record.public_id, 'answer', page, JSON.stringify({ response }));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      result: 'verified',
      location: `/v/${record.public_id}?n=passkey-verified#notice`,
    });
    const closed = await api.get<CaseBody>(`/v1/cases/${record.id}/`);
    expect(closed.body.status).toBe('closed');
    expect(closed.body.verification_methods.passkey).toMatchObject({ verified: true });
    expect(closed.body.verification_methods.passkey.passkey_id).toMatch(/^[0-9a-f-]{36}$/);
    // The same answer again: the step is done, nothing is checked.
    const replay = await ceremonyPost(record.public_id, 'answer', page, JSON.stringify({ response }));
    expect(((await replay.json()) as { result: string }).result).toBe('unavailable');

    // The signed evidence record cites the passkey, the case that saved it and the ID check it
    // leads back to.
    const stepsOf = async (caseId: string) => {
      const signed = await api.get<{ payload: string }>(`/v1/cases/${caseId}/evidence/`);
      expect(signed.status).toBe(200);
      const record = JSON.parse(Buffer.from(signed.body.payload, 'base64url').toString('utf8')) as {
        steps: Array<{ method: string; outcome: string; evidence: Record<string, unknown> }>;
      };
      return new Map(record.steps.map((step) => [step.method, step]));
    };
    const idCheck = (await stepsOf(idCheckCaseId)).get('government_id');
    expect(idCheck?.outcome).toBe('verified');
    expect((await stepsOf(record.id)).get('passkey')).toMatchObject({
      outcome: 'verified',
      evidence: {
        passkey_id: closed.body.verification_methods.passkey.passkey_id,
        enrolling_case_id: idCheckCaseId,
        id_check_case_id: idCheckCaseId,
        id_check_vendor_session_id: idCheck?.evidence.vendor_session_id,
        id_check_vendor_report_id: idCheck?.evidence.vendor_report_id,
        id_checked_at: expect.any(String),
      },
    });
  });

  it('refuses a request without the form token, or from another site, before doing anything', async () => {
    const record = await reverification();
    const page = await openPage(record.public_id);
    const tokenless = await ceremonyPost(record.public_id, 'options', { ...page, token: 'forged' }, '{}');
    expect(tokenless.status).toBe(403);
    expect(await tokenless.json()).toMatchObject({ error: 'form_expired' });
    const crossSite = await ceremonyPost(record.public_id, 'options', page, '{}', {
      'Sec-Fetch-Site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    // The positive control: the same page's token, from the same site.
    expect((await ceremonyPost(record.public_id, 'options', page, '{}')).status).toBe(200);
  });

  it('takes no body larger than a browser’s answer', async () => {
    const record = await reverification();
    const page = await openPage(record.public_id);
    const padded = JSON.stringify({ response: { id: 'x', padding: 'a'.repeat(20_000) } });
    const tooLarge = await ceremonyPost(record.public_id, 'answer', page, padded);
    expect(tooLarge.status).toBe(413);
    const notJson = await ceremonyPost(record.public_id, 'answer', page, 'not json');
    expect(notJson.status).toBe(400);
    // Neither spent an attempt: the step still has all five.
    const fresh = await api.get<CaseBody & { verification_methods: { passkey: { verified: boolean } } }>(
      `/v1/cases/${record.id}/`,
    );
    expect(fresh.body.status).toBe('open');
  });
});

describe('the closed page’s offer to save a passkey', () => {
  it('takes no attestation larger than a browser’s, and saves the one a browser sends', async () => {
    const record = await offeringCase('enroller@desk.test');
    const page = await openPage(record.public_id);
    expect(page.html).toContain('data-passkey="save"');
    expect(page.token).not.toBe('');
    // A body of exactly the limit is read (and refused for what it says), one byte more is not.
    const padded = (bytes: number) => {
      const body = JSON.stringify({ response: { id: 'x', padding: '' } });
      return JSON.stringify({ response: { id: 'x', padding: 'a'.repeat(bytes - body.length) } });
    };
    expect(padded(PASSKEY_BODY_LIMIT_BYTES)).toHaveLength(PASSKEY_BODY_LIMIT_BYTES);
    const tooLarge = await ceremonyPost(
      record.public_id,
      'enroll',
      page,
      padded(PASSKEY_BODY_LIMIT_BYTES + 1),
    );
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ error: 'payload_too_large', location: `/v/${record.public_id}` });
    const atLimit = await ceremonyPost(record.public_id, 'enroll', page, padded(PASSKEY_BODY_LIMIT_BYTES));
    expect(atLimit.status).toBe(200);
    expect(await atLimit.json()).toMatchObject({ result: 'refused' });
    const notJson = await ceremonyPost(record.public_id, 'enroll', page, 'not json');
    expect(notJson.status).toBe(400);
    const listed = () =>
      api.get<{ results: Array<{ enrolling_case_id: string }> }>(
        '/v1/passkeys/?subject_email=enroller@desk.test',
      );
    expect((await listed()).body.results).toEqual([]);

    // The positive control: a software authenticator's attestation, of a browser's size, is saved.
    const options = await ceremonyPost(record.public_id, 'enroll-options', page, '{}');
    expect(options.status).toBe(200);
    const { options: creation } = (await options.json()) as { options: { challenge: string } };
    const response = new SoftwareAuthenticator(relyingPartyOf(app.baseUrl).origin).register(
      creation.challenge,
    );
    const body = JSON.stringify({ response });
    expect(body.length).toBeLessThan(PASSKEY_BODY_LIMIT_BYTES / 8);
    const saved = await ceremonyPost(record.public_id, 'enroll', page, body);
    expect(saved.status).toBe(200);
    expect(await saved.json()).toEqual({
      result: 'saved',
      location: `/v/${record.public_id}?n=passkey-saved#notice`,
    });
    expect((await listed()).body.results).toEqual([
      expect.objectContaining({ enrolling_case_id: record.id }),
    ]);
  });
});

/**
 * Every ceremony request spends one of its case's budget: the re-verification's two and the
 * enrollment's two. An empty body is enough to spend it (the answers refuse it as not theirs: 400).
 */
const CEREMONY_BUDGETS: Array<{ step: CeremonyStep; opens: () => Promise<CaseBody>; spent: number }> = [
  { step: 'options', opens: reverification, spent: 200 },
  { step: 'answer', opens: reverification, spent: 400 },
  { step: 'enroll-options', opens: () => offeringCase(), spent: 200 },
  { step: 'enroll', opens: () => offeringCase(), spent: 400 },
];

describe('the ceremonies’ budget', () => {
  it.each(CEREMONY_BUDGETS)(
    'limits a case’s $step requests, and answers the rest 429 with where to go',
    async ({ step, opens, spent }) => {
      const record = await opens();
      const page = await openPage(record.public_id);
      for (let i = 0; i < PASSKEY_CEREMONIES_PER_CASE.points; i += 1) {
        expect((await ceremonyPost(record.public_id, step, page, '{}')).status, `request ${i + 1}`).toBe(
          spent,
        );
      }
      const limited = await ceremonyPost(record.public_id, step, page, '{}');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toMatchObject({
        error: 'rate_limited',
        location: `/v/${record.public_id}?n=passkey-too-many#notice`,
      });
      // Another case's budget is its own.
      const other = await opens();
      const otherPage = await openPage(other.public_id);
      expect((await ceremonyPost(other.public_id, step, otherPage, '{}')).status).toBe(spent);
    },
  );
});

/**
 * What the subject's page says about their pictures (issue 25, item 10): only a case that asks for
 * them (an ID document and a selfie) says anything, and it says what is kept, by whom and for how
 * long, as the code does it (decisions: "Case lifecycle and data protection"). This app runs live
 * ID checks through Stripe Identity (a stand-in of its API), so live cases take the redirect flow,
 * whose pictures Stripe keeps until a redaction has them erased; test cases use the simulated
 * provider, which keeps nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { type StripeStandIn, startStripeStandIn } from '@/test/support/stripe-stand-in';

type Api = ReturnType<typeof apiClient>;
type CaseWire = { id: string; verification_url: string };

let database: TestDatabase;
let app: RunningApp;
let stripe: StripeStandIn;
let teamId: string;
let live: Api;
let test: Api;

beforeAll(async () => {
  database = await createTestDatabase();
  stripe = await startStripeStandIn();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      IDENTITY_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_API_BASE: stripe.url,
    },
  });
  const created = await createTeam(
    database.db,
    { name: 'Harbour Badges', adminEmail: 'admin@badges.test' },
    systemClock,
  );
  teamId = created.team.id;
  live = apiClient(app.baseUrl, created.key.token);
  test = apiClient(app.baseUrl, created.testKey.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await stripe?.close();
  await database?.close();
});

async function openCase(api: Api, methods: Record<string, boolean>): Promise<CaseWire> {
  const created = await api.post<CaseWire>('/v1/cases/', {
    subject_email: 'subject@badges.test',
    verification_methods: methods,
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** The page's words, tags dropped. */
async function pageText(url: string): Promise<string> {
  const response = await fetch(url);
  const html = await response.text();
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/\s+/g, ' ');
}

/** The "Your pictures" part of the page, tags dropped; null when the page has none. */
async function picturesNotice(url: string): Promise<string | null> {
  const html = await (await fetch(url)).text();
  const section = html.match(/<section class="pictures"[\s\S]*?<\/section>/)?.[0];
  return section
    ? section
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
    : null;
}

describe("the subject's page on pictures", () => {
  it('says nothing of pictures on a case that asks for none, nor on other pages', async () => {
    const emailOnly = await openCase(live, { email: true });
    expect(await pageText(emailOnly.verification_url)).not.toMatch(/picture|photo|selfie|image/i);
    expect(await picturesNotice(emailOnly.verification_url)).toBeNull();
    expect(await pageText(`${app.baseUrl}/v/not-a-case`)).not.toMatch(/picture/i);
  });

  it('says Stripe keeps the pictures until Vouch has them erased, and when that is, on a live ID case', async () => {
    await updateTeam(database.db, teamId, { retentionDays: null });
    const idCase = await openCase(live, { government_id: true });
    const notice = (await picturesNotice(idCase.verification_url)) ?? 'no pictures notice';
    expect(notice).toContain('Vouch never receives your pictures.');
    expect(notice).toContain(
      'Stripe, our ID partner, keeps the pictures of your ID document and your selfie, and what it read from them, until Vouch asks Stripe to erase them.',
    );
    expect(notice).toContain(
      'when Harbour Badges asks for it (Harbour Badges has set no time for this to happen by itself)',
    );
    expect(notice).toContain('Vouch keeps the result of the check and the name read from your document');
    expect(notice).not.toMatch(/does not keep your pictures/);

    // The team's retention period is when it happens by itself.
    await updateTeam(database.db, teamId, { retentionDays: 30 });
    expect(await picturesNotice(idCase.verification_url)).toContain(
      'once 30 days have passed since this verification started (Harbour Badges’s setting), or sooner if Harbour Badges asks',
    );
    await updateTeam(database.db, teamId, { retentionDays: null });

    // Once redacted, the page says it happened.
    expect((await live.post(`/v1/cases/${idCase.id}/redact/`)).status).toBe(200);
    expect(await picturesNotice(idCase.verification_url)).toContain(
      'This verification’s personal data has been erased, and Vouch has asked Stripe to erase its copy of your pictures.',
    );
  });

  it('says nobody keeps them on a test case, whose pictures only the simulated check sees', async () => {
    const idCase = await openCase(test, { government_id: true });
    const notice = (await picturesNotice(idCase.verification_url)) ?? 'no pictures notice';
    expect(notice).toContain(
      'Your pictures are checked as they arrive and then discarded: neither Vouch nor anyone else keeps them.',
    );
    expect(notice).not.toContain('Stripe');
  });
});

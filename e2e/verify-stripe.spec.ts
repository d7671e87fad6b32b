import { and, eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { events } from '../db/schema';
import { apiClient } from '../test/support/api-client';
import { type RunningApp, startApp } from '../test/support/app';
import { type StripeStandIn, startStripeStandIn } from '../test/support/stripe-stand-in';
import { test as base, expect, expectAccessible, uniqueEmail } from './support/fixtures';

/**
 * The Stripe Identity flow through the real pages: an app configured with IDENTITY_PROVIDER=stripe
 * (the official SDK pointed at a local stand-in of Stripe's API and hosted page), the subject sent
 * to "Stripe" and back, the result read from Stripe on return or from its signed webhook.
 */
const test = base.extend<object, { stripeApp: { app: RunningApp; stripe: StripeStandIn } }>({
  stripeApp: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright takes fixture dependencies by destructuring
    async ({}, use) => {
      const stripe = await startStripeStandIn();
      const app = await startApp({
        databaseUrl: process.env.E2E_DATABASE_URL ?? '',
        env: {
          IDENTITY_PROVIDER: 'stripe',
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_API_BASE: stripe.url,
          RATE_LIMIT_WRITE_PER_MINUTE: '100000',
          RATE_LIMIT_READ_PER_MINUTE: '100000',
          RUN_WORKERS: 'false',
        },
      });
      stripe.webhookUrl = `${app.baseUrl}/integrations/stripe`;
      await use({ app, stripe });
      await app.stop();
      await stripe.close();
    },
    { scope: 'worker' },
  ],
});

async function closedEvents(database: Database, caseId: string): Promise<number> {
  const rows = await database.db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.caseId, caseId), eq(events.type, 'case.closed')));
  return rows.length;
}

async function idCase(app: RunningApp, apiKey: string) {
  const res = await apiClient(app.baseUrl, apiKey).post<{ id: string; verification_url: string }>(
    '/v1/cases/',
    {
      subject_email: uniqueEmail('stripe'),
      verification_methods: { government_id: true },
    },
  );
  expect(res.status, res.text).toBe(201);
  return res.body;
}

test.describe('government ID through Stripe Identity', () => {
  test('the subject comes back before Stripe’s webhook: the on-return check closes the case', async ({
    page,
    stripeApp,
    apiKey,
    vouch,
    database,
  }) => {
    const { stripe } = stripeApp;
    const created = await idCase(stripeApp.app, apiKey);
    await page.goto(created.verification_url);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Start the ID check' }).click();
    await expect(page).toHaveURL(new RegExp(`^${stripe.url}/hosted/vs_`));
    const [session] = [...stripe.sessions.values()].filter((s) => s.metadata.case_id === created.id);
    expect(session).toMatchObject({
      type: 'document',
      options: { document: { require_matching_selfie: 'true' } },
    });
    // Stripe is late: its webhook waits until the subject is back and the page has settled.
    stripe.holdWebhooks = true;
    try {
      await page.getByRole('button', { name: 'Pass' }).click();
      await expect(page).toHaveURL(new RegExp(`^${created.verification_url}`));
      await expect(page.locator('#case-summary')).toContainText('All steps are done');
      expect(stripe.webhookDeliveries.filter((d) => d.sessionId === session?.id)).toEqual([]);
      expect(await vouch.getCase(created.id)).toMatchObject({
        status: 'closed',
        subject_name: 'Ada Lovelace',
      });
    } finally {
      stripe.holdWebhooks = false;
    }
    // The late webhook is accepted and changes nothing: the case closed once.
    await stripe.releaseWebhooks();
    expect(stripe.webhookDeliveries.filter((d) => d.sessionId === session?.id)).toEqual([
      { sessionId: session?.id, type: 'identity.verification_session.verified', status: 200 },
    ]);
    expect(await closedEvents(database, created.id)).toBe(1);
    expect(await vouch.getCase(created.id)).toMatchObject({ status: 'closed', subject_name: 'Ada Lovelace' });
  });

  test('Stripe’s webhook arrives before the subject is back: the return finds the case already closed', async ({
    page,
    stripeApp,
    apiKey,
    vouch,
    database,
  }) => {
    const { stripe } = stripeApp;
    const created = await idCase(stripeApp.app, apiKey);
    await page.goto(created.verification_url);
    await page.getByRole('link', { name: 'Start the ID check' }).click();
    const [session] = [...stripe.sessions.values()].filter((s) => s.metadata.case_id === created.id);
    // Stripe finishes and sends its webhook while the subject is still on Stripe's page: only
    // the webhook can have closed the case.
    await stripe.complete(session?.id ?? '', 'verified');
    expect(stripe.webhookDeliveries.filter((d) => d.sessionId === session?.id)).toEqual([
      { sessionId: session?.id, type: 'identity.verification_session.verified', status: 200 },
    ]);
    expect(await vouch.getCase(created.id)).toMatchObject({ status: 'closed', subject_name: 'Ada Lovelace' });
    // Then the subject comes back.
    await page.goto(session?.return_url ?? '');
    await expect(page).toHaveURL(new RegExp(`^${created.verification_url}`));
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    expect(await vouch.getCase(created.id)).toMatchObject({ status: 'closed', subject_name: 'Ada Lovelace' });
    expect(await closedEvents(database, created.id)).toBe(1);
  });

  test('a rejected selfie fails the case', async ({ page, stripeApp, apiKey, vouch }) => {
    const created = await idCase(stripeApp.app, apiKey);
    await page.goto(created.verification_url);
    await page.getByRole('link', { name: 'Start the ID check' }).click();
    await page.getByRole('button', { name: 'Reject selfie' }).click();
    await expect(page.locator('#case-summary')).toContainText('your selfie did not match');
    expect(await vouch.getCase(created.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'selfie_rejected',
    });
  });

  test("Stripe's signed webhook settles a subject who never came back; the open page follows", async ({
    page,
    stripeApp,
    apiKey,
    vouch,
  }) => {
    const created = await idCase(stripeApp.app, apiKey);
    await page.goto(created.verification_url);
    await page.getByRole('link', { name: 'Start the ID check' }).click();
    await page.goto(created.verification_url);
    await expect(page.getByRole('link', { name: 'Continue the ID check' })).toBeVisible();
    const [session] = [...stripeApp.stripe.sessions.values()].filter(
      (s) => s.metadata.case_id === created.id,
    );
    await stripeApp.stripe.complete(session?.id ?? '', 'reject_document');
    expect(stripeApp.stripe.webhookDeliveries.filter((d) => d.sessionId === session?.id)).toEqual([
      { sessionId: session?.id, type: 'identity.verification_session.requires_input', status: 200 },
    ]);
    await expect(page.locator('#case-summary')).toContainText('your ID document could not be confirmed');
    expect(await vouch.getCase(created.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'government_id_rejected',
    });

    const forged = await page.request.post(`${stripeApp.app.baseUrl}/integrations/stripe`, {
      data: { type: 'identity.verification_session.verified' },
      headers: { 'Stripe-Signature': 't=1,v1=00' },
    });
    expect(forged.status()).toBe(400);
  });
});

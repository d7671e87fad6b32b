import { expect, test } from './support/fixtures';

/**
 * /docs as a newcomer's browser shows it: the reference renderer draws the guides and every
 * operation from /v1/openapi.json, with a code sample and an example answer, while nothing is
 * fetched from anywhere but this origin (offline, no CDN) and nothing breaks the page's policy.
 */
test.describe('the API reference', () => {
  test('renders the guides and the operations from this origin alone, within its policy', async ({
    page,
    baseUrl,
  }) => {
    const origin = new URL(baseUrl).origin;
    const elsewhere: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(`${baseUrl}/docs`);
    await expect(page).toHaveTitle(/Vouch/);
    for (const guide of [
      'Quick start with a test key',
      'Receiving and verifying webhooks',
      'Developing locally',
    ]) {
      await expect(page.getByRole('heading', { name: guide }).first()).toBeAttached();
    }
    // The guides' code, as written in docs/guides.
    await expect(page.getByText('verifyVouchWebhook', { exact: false }).first()).toBeAttached();

    // An operation with its generated code sample and an example of its answer.
    const doc = (await (await page.request.get(`${baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.summary));
    expect(summaries).toContain('Create a verification case');
    await page.goto(`${baseUrl}/docs#tag/cases/POST/v1/cases/`);
    const create = page.getByRole('heading', { name: 'Create a verification case' }).first();
    await expect(create).toBeVisible();
    await expect(page.getByText('/v1/cases/', { exact: false }).first()).toBeVisible();
    await expect(page.locator('body')).toContainText('Idempotency-Key');
    await expect(page.locator('body')).toContainText('INSUFFICIENT_ALLOWANCE');
    await expect(page.locator('body')).toContainText("fetch('");

    expect(elsewhere).toEqual([]);
    expect(refused).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

import { apiClient } from '../test/support/api-client';
import { type CaseWire, expect, expectAccessible, linkIn, test, uniqueEmail } from './support/fixtures';

/**
 * The subject's and the manager's pages after the team acts on a case (decisions: "Case lifecycle
 * and data protection"), at phone width, checked with axe: a canceled case says so in
 * plain words on every link and offers nothing to do; after a resend the old link says it was
 * replaced and the new one works.
 */
test.describe('a case the team acted on', () => {
  test('canceled: the case page and the manager’s page say so, and offer nothing', async ({
    page,
    vouch,
    baseUrl,
    apiKey,
  }) => {
    const subject = uniqueEmail('canceled');
    const manager = uniqueEmail('canceled-boss');
    const created = await vouch.createCase({
      subject_email: subject,
      verification_methods: { email: true, manager: true },
      manager_name: 'Morgan Boss',
      manager_email: manager,
    });
    const managerLink = linkIn(await vouch.waitForMail(manager), `${baseUrl}/v/`);
    const canceled = await apiClient(baseUrl, apiKey).post<CaseWire>(`/v1/cases/${created.id}/cancel/`);
    expect(canceled.status, canceled.text).toBe(200);

    await page.goto(created.verification_url);
    await expect(page.locator('#case-summary')).toContainText('canceled this verification');
    await expect(page.locator('[data-step="email"]')).toContainText('Not done');
    await expect(page.locator('[data-step="email"]')).not.toContainText('We e-mailed a link');
    await expect(page.getByRole('button')).toHaveCount(0);
    const width = page.viewportSize()?.width ?? 0;
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await expectAccessible(page);

    await page.goto(managerLink);
    await expect(page.locator('main')).toContainText(
      'canceled this verification: there is nothing for you to do',
    );
    await expect(page.getByRole('button')).toHaveCount(0);
    await expectAccessible(page);
  });

  test('resent: the old link says it was replaced, the new one confirms the address', async ({
    page,
    vouch,
    baseUrl,
    apiKey,
  }) => {
    const subject = uniqueEmail('resent');
    const created = await vouch.createCase({ subject_email: subject, verification_methods: { email: true } });
    const first = linkIn(await vouch.waitForMail(subject), `${baseUrl}/v/`);
    const resent = await apiClient(baseUrl, apiKey).post(`/v1/cases/${created.id}/resend/`);
    expect(resent.status, resent.text).toBe(200);
    const second = linkIn(
      await vouch.waitForMail(subject, /verify your identity/, /replaces the one we sent earlier/),
      `${baseUrl}/v/`,
    );
    expect(second).not.toBe(first);

    await page.goto(first);
    await expect(page.locator('#notice')).toContainText('replaced by a newer one');
    await expectAccessible(page);

    await page.goto(second);
    await page.getByRole('button', { name: 'Confirm my e-mail address' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your e-mail address is confirmed.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
  });

  test('redacted: the page keeps the outcome and shows nothing of the person', async ({
    page,
    vouch,
    baseUrl,
    apiKey,
  }) => {
    const subject = uniqueEmail('erased');
    const created = await vouch.createCase({
      subject_email: subject,
      subject_name: 'Erin Erased',
      verification_methods: { email: true },
    });
    const redacted = await apiClient(baseUrl, apiKey).post<CaseWire>(`/v1/cases/${created.id}/redact/`);
    expect(redacted.status, redacted.text).toBe(200);

    await page.goto(created.verification_url);
    await expect(page.locator('#case-summary')).toContainText('canceled this verification');
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toContain(subject);
    expect(text).not.toContain(`${subject.slice(0, 1)}•••`);
    expect(text).not.toContain('Erin');
    await expect(page.getByRole('button')).toHaveCount(0);
    await expectAccessible(page);
  });
});

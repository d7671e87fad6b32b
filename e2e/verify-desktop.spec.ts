import { type CaseWire, expect, expectAccessible, linkIn, test, uniqueEmail } from './support/fixtures';

/**
 * The subject's flows run in the phone project, the device a subject most often holds (see
 * playwright.config.ts). A subject may open the link on a computer, and a manager usually does:
 * here every step's section and the manager's page at desktop width keep one readable column in
 * the middle of the window, scroll nowhere sideways and pass axe.
 */
test.describe('the verification pages at desktop width', () => {
  test('every step and the manager’s page: one centred column, nothing wider than the window', async ({
    page,
    vouch,
    baseUrl,
  }) => {
    const manager = uniqueEmail('desktop-boss');
    const created: CaseWire = await vouch.createCase({
      subject_email: uniqueEmail('desktop'),
      verification_methods: {
        email: true,
        sms: true,
        government_id: true,
        custom_question: true,
        manager: true,
      },
      custom_question_text: 'Which office do you work from?',
      custom_question_answer: 'Leeds',
      manager_name: 'Morgan Boss',
      manager_email: manager,
    });

    const expectOneCentredColumn = async () => {
      const window = page.viewportSize()?.width ?? 0;
      expect(window).toBeGreaterThanOrEqual(1000);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(window);
      const column = await page.locator('main').boundingBox();
      if (!column) throw new Error('the page has no main column');
      // A line of text stays readable (36rem), and the column sits in the middle of the window.
      expect(column.width).toBeLessThanOrEqual(600);
      expect(Math.abs(column.x - (window - (column.x + column.width)))).toBeLessThanOrEqual(2);
    };

    await page.goto(created.verification_url);
    for (const step of ['email', 'sms', 'government_id', 'custom_question', 'manager']) {
      await expect(page.locator(`[data-step="${step}"]`)).toBeVisible();
    }
    await expect(page.getByLabel('Mobile number')).toBeVisible();
    await expectOneCentredColumn();
    await expectAccessible(page);

    await page.goto(linkIn(await vouch.waitForMail(manager), `${baseUrl}/v/`));
    await expect(page.getByRole('button', { name: /Yes, confirm/ })).toBeVisible();
    await expectOneCentredColumn();
    await expectAccessible(page);
  });
});

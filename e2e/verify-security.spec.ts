import { and, eq } from 'drizzle-orm';
import { caseSteps } from '../db/schema';
import { expect, expectAccessible, test, uniqueEmail } from './support/fixtures';

test.describe('verification page security', () => {
  test('unknown and malformed ids answer the same page and reveal nothing', async ({ page, baseUrl }) => {
    for (const id of ['AAAAAAAAAAAAAAAA', 'nope', "x'%3Bdrop"]) {
      const response = await page.goto(`${baseUrl}/v/${id}`);
      expect(response?.status()).toBe(404);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('This link is not valid');
    }
    await expectAccessible(page);
    const status = await page.request.get(`${baseUrl}/v/AAAAAAAAAAAAAAAA/status`);
    expect(status.status()).toBe(404);
  });

  test('strict CSP, no inline script, no third-party resources, no referrer', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('csp'),
      verification_methods: { sms: true },
    });
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(new URL(created.verification_url).origin)) external.push(r.url());
    });
    const response = await page.goto(created.verification_url);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    expect(await page.locator('script:not([src])').count()).toBe(0);
    expect(external).toEqual([]);
  });

  test('forms refuse cross-site posts and posts without the page token', async ({
    page,
    vouch,
    request,
    database,
  }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('csrf'),
      verification_methods: { custom_question: true },
      custom_question_text: 'Pet?',
      custom_question_answer: 'Rex',
    });
    const target = `${created.verification_url}/question`;
    // Forged cross-site form posts (no cookie, foreign origin): the right answer would close the
    // case, a wrong one would spend an attempt.
    for (const answer of ['Rex', 'Max']) {
      const forged = await request.post(target, {
        form: { answer, csrf: 'x' },
        headers: { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(303);
      expect(forged.headers().location).toContain('n=form-expired');
    }

    // The subject's own browser, but a token that does not match its cookie, and a wrong answer.
    await page.goto(created.verification_url);
    await page.locator('input[name="csrf"]').evaluate((input) => {
      (input as HTMLInputElement).value = 'tampered';
    });
    await page.getByLabel('Pet?').fill('Max');
    await page.getByRole('button', { name: 'Confirm answer' }).click();
    await expect(page.locator('#notice')).toHaveText('This form had expired. Please try again.');
    expect((await vouch.getCase(created.id)).status).toBe('open');

    // No attempt was counted: all three are left, on the page and in the database.
    await expect(page.locator('#answer-hint')).toContainText('3 attempts left.');
    const [step] = await database.db
      .select({ failedAttempts: caseSteps.failedAttempts })
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, created.id), eq(caseSteps.method, 'custom_question')));
    expect(step?.failedAttempts).toBe(0);
    await page.getByLabel('Pet?').fill('rex');
    await page.getByRole('button', { name: 'Confirm answer' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your answer is confirmed.');
  });

  test('an expired case shows its own page and takes no input', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('expired'),
      verification_methods: { custom_question: true },
      custom_question_text: 'Pet?',
      custom_question_answer: 'Rex',
    });
    await vouch.expireCase(created.id);
    await page.goto(created.verification_url);
    await expect(page.locator('#case-summary')).toContainText('This verification link has expired');
    await expect(page.locator('form')).toHaveCount(0);
    await expectAccessible(page);
    expect((await vouch.getCase(created.id)).status).toBe('expired');
  });
});

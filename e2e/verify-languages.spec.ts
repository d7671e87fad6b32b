import type { Page } from '@playwright/test';
import { CATALOGUES } from '../server/i18n/catalogues';
import { type CaseWire, expect, expectAccessible, linkIn, test, uniqueEmail } from './support/fixtures';

/**
 * The subject's pages in Arabic (right to left) and Japanese at phone width: every page a subject
 * or a manager opens passes axe, and nothing is wider than the screen or spills out of its box
 * (long words, long addresses). The language switch is plain links: it works with JavaScript off.
 */

/** Nothing scrolls sideways, and no element of the page reaches past the window's edges. */
async function expectNothingOverflows(page: Page) {
  const width = page.viewportSize()?.width ?? 0;
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  const outside = await page.evaluate((limit) => {
    const found: string[] = [];
    for (const element of document.querySelectorAll('body *')) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || getComputedStyle(element).position === 'absolute') continue;
      if (box.left < -1 || box.right > limit + 1)
        found.push(`${element.tagName}.${element.className}: ${box.left}–${box.right}`);
    }
    return found;
  }, width);
  expect(outside).toEqual([]);
}

/** Where each of `parts` starts on screen (its first character's left edge), in the element's text. */
async function visualOrder(page: Page, selector: string, parts: string[]): Promise<number[]> {
  return page.locator(selector).evaluate((element, wanted) => {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const nodes: Text[] = [];
    while (walker.nextNode()) nodes.push(walker.currentNode as Text);
    return wanted.map((part) => {
      for (const node of nodes) {
        const at = (node.textContent ?? '').indexOf(part);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 1);
        return range.getBoundingClientRect().left;
      }
      throw new Error(`${part} not found in ${element.textContent}`);
    });
  }, parts);
}

async function expectWellLaidOut(page: Page, lang: string, dir: 'ltr' | 'rtl') {
  await expect(page.locator('html')).toHaveAttribute('lang', lang);
  await expect(page.locator('html')).toHaveAttribute('dir', dir);
  await expectNothingOverflows(page);
  await expectAccessible(page);
}

for (const [locale, dir] of [
  ['ar', 'rtl'],
  ['ja', 'ltr'],
] as const) {
  test(`every page in ${locale} at phone width: ${dir}, axe clean, nothing overflowing`, async ({
    page,
    vouch,
    baseUrl,
  }) => {
    const t = CATALOGUES[locale];
    const email = uniqueEmail(`lang-${locale}`);
    const manager = uniqueEmail(`lang-${locale}-boss`);
    const created: CaseWire = await vouch.createCase({
      subject_email: email,
      subject_name: 'Maximiliane Oberwachtmeisterin-Schlüsselbund',
      locale,
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

    await page.goto(created.verification_url);
    await expect(page.getByRole('heading', { level: 1 })).toContainText(t['case.title'].slice(0, 4));
    await expectWellLaidOut(page, locale, dir);
    if (dir === 'rtl') {
      // Right to left: the heading starts at the right edge of the column.
      const main = await page.locator('main').boundingBox();
      const heading = await page.locator('h1').boundingBox();
      expect(
        main && heading && Math.abs(main.x + main.width - (heading.x + heading.width)),
      ).toBeLessThanOrEqual(20);
      // Latin text inside right-to-left pages keeps its own order: the team's question ends with
      // its question mark at its right, and the phone example reads +44 first, left to right.
      const question = await visualOrder(page, 'label[for="answer"]', ['Which', '?']);
      expect(question[0]).toBeLessThan(question[1] ?? 0);
      const phone = await visualOrder(page, '#phone-hint', ['+44', '7911', '123456']);
      expect(phone[0]).toBeLessThan(phone[1] ?? 0);
      expect(phone[1]).toBeLessThan(phone[2] ?? 0);
    }

    await page.getByLabel(t['sms.phoneLabel']).fill('+447911123456');
    await page.getByRole('button', { name: t['sms.send'], exact: true }).click();
    await expect(page.locator('#notice')).toHaveText(t['notice.sms-sent']);
    await expectWellLaidOut(page, locale, dir);

    const mail = await vouch.waitForMail(email);
    expect(mail.language).toBe(locale);
    await page.goto(linkIn(mail, `${created.verification_url}/email/`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(t['emailConfirm.title']);
    await expectWellLaidOut(page, locale, dir);

    // The manager's page goes by the manager's own choice, not the case's.
    await page.goto(`${linkIn(await vouch.waitForMail(manager), `${baseUrl}/v/`)}?lang=${locale}`);
    await expect(page.getByRole('button', { name: t['managerPage.decline'] })).toBeVisible();
    await expectWellLaidOut(page, locale, dir);

    await page.goto(`${created.verification_url}/language`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(t['page.languages']);
    await expectWellLaidOut(page, locale, dir);

    await page.goto(`${baseUrl}/v/no-such-case?lang=${locale}`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(t['notFound.heading']);
    await expectWellLaidOut(page, locale, dir);
  });
}

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the language switch is a link: it changes the page, and the case keeps the choice', async ({
    page,
    vouch,
  }) => {
    const created: CaseWire = await vouch.createCase({
      subject_email: uniqueEmail('switch'),
      locale: 'de',
      verification_methods: { email: true, sms: true },
    });
    await page.goto(created.verification_url);
    await expect(page.locator('html')).toHaveAttribute('lang', 'de');
    await page.getByRole('link', { name: `${CATALOGUES.de['page.languages']}: Deutsch` }).click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(CATALOGUES.de['page.languages']);
    await page.getByRole('link', { name: '日本語' }).click();
    await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
    await expect(page.getByRole('heading', { level: 1 })).toContainText(
      CATALOGUES.ja['case.heading'].slice(-4),
    );
    await page.goto(created.verification_url);
    await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
    await page.getByRole('link', { name: `${CATALOGUES.ja['page.languages']}: 日本語` }).click();
    await expect(page.getByRole('link', { name: '日本語' })).toHaveAttribute('aria-current', 'true');
  });
});

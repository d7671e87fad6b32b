import sharp from 'sharp';
import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

test.describe.configure({ timeout: 120_000 });

test('an owner brands the team: the preview follows the form, a light colour is refused, the logo and colour reach the subject’s page', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Brandco');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'brandco-password-e2e-1');

  await page.getByRole('link', { name: 'Branding' }).click();
  await expect(page.getByRole('heading', { name: 'Branding', level: 1 })).toBeVisible();
  const pagePreview = page.frameLocator('iframe[title="Preview of a verification page"]');
  const mailPreview = page.frameLocator('iframe[title="Preview of the verification e-mail"]');
  await expect(pagePreview.locator('.brand-name')).toHaveText('Brandco');
  // The previews are drawn whole, not cut at a fixed height; the colour picker is a swatch.
  for (const title of ['Preview of a verification page', 'Preview of the verification e-mail']) {
    const frame = page.locator(`iframe[title="${title}"]`);
    await expect
      .poll(async () =>
        frame.evaluate((element) => {
          const inner = (element as HTMLIFrameElement).contentDocument?.documentElement;
          return inner ? element.getBoundingClientRect().height - inner.scrollHeight : -1;
        }),
      )
      .toBeGreaterThanOrEqual(0);
  }
  const swatch = await page.getByLabel('Pick the primary colour').boundingBox();
  expect(swatch?.width).toBeGreaterThanOrEqual(40);
  expect(swatch?.height).toBeGreaterThanOrEqual(36);

  // The preview follows what is typed, before anything is saved.
  await page.getByLabel(/^Name shown to people/).fill('Brandco People Team');
  await page.getByLabel('Default language').selectOption({ label: 'German' });
  await page.getByLabel('Support line').fill('Questions? Call the Brandco desk on 0800 123');
  await expect(pagePreview.locator('.brand-name')).toHaveText('Brandco People Team');
  await expect(pagePreview.locator('html')).toHaveAttribute('lang', 'de');
  await expect(pagePreview.locator('footer .support')).toHaveText(
    'Questions? Call the Brandco desk on 0800 123',
  );
  await expect(mailPreview.getByText('Questions? Call the Brandco desk on 0800 123')).toBeVisible();

  await page.getByLabel(/^Primary colour/).fill('#ffd700');
  await page.getByRole('button', { name: 'Save branding' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'reaches only' })).toContainText(
    /reaches only 1\.\d\d:1 contrast/,
  );
  await page.getByLabel(/^Primary colour/).fill('#7a1fa2');
  await page.getByRole('button', { name: 'Save branding' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();
  await expect(pagePreview.locator('button').first()).toHaveCSS('background-color', 'rgb(122, 31, 162)');

  const logo = await sharp({ create: { width: 360, height: 120, channels: 3, background: '#7a1fa2' } })
    .png()
    .toBuffer();
  await page
    .getByLabel(/^PNG, JPEG or WebP/)
    .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logo });
  await expect(page.getByRole('img', { name: 'Your current logo' })).toBeVisible();
  await expect(pagePreview.locator('img.logo')).toBeVisible();
  // The frames draw the subject's page, checked with axe at the end, where a subject meets it.
  await expectAccessible(page, ['iframe']);

  // A test-mode case's subject sees it all (test mode shows the same branding).
  const created = await fetch(`${world.app.baseUrl}/v1/cases/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${team.test_api_key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      subject_email: 'someone@brandco.test',
      verification_methods: { email: true, sms: true },
    }),
  });
  const { verification_url } = (await created.json()) as { verification_url: string };
  await page.goto(verification_url);
  // The browser asks for English, which comes before the team's default language (German).
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.locator('.brand-name')).toHaveText('Brandco People Team');
  await expect(page.locator('img.logo')).toBeVisible();
  expect(await page.locator('img.logo').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(360);
  await expect(page.getByRole('button').first()).toHaveCSS('background-color', 'rgb(122, 31, 162)');
  await expectAccessible(page);
});

import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

test.describe.configure({ timeout: 120_000 });

test('an owner makes a template that leaves the manager to each case, and opens a case from it', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Templateco');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'templateco-password-e2e-1');

  await page.getByRole('link', { name: 'Templates' }).click();
  await expect(page.getByRole('heading', { name: 'Templates', level: 1 })).toBeVisible();
  await expect(page.getByText('No templates yet.')).toBeVisible();
  const form = page.getByRole('form', { name: 'New template' });
  await form.getByLabel(/^Name/).fill('new-hire');
  await form.getByLabel('E-mail link').uncheck();
  await form.getByLabel('Government ID and selfie').check();
  await form.getByLabel('Confirmation by their manager').check();
  await form.getByRole('button', { name: 'Create the template' }).click();
  const row = page.getByRole('row').filter({ hasText: 'new-hire' });
  await expect(row).toContainText('Government ID');
  await expect(row).toContainText('Each case gives the manager.');
  await expectAccessible(page);

  // The New case form offers it, and asks only for what it leaves to each case.
  await page.getByRole('link', { name: 'Cases' }).click();
  await page.getByRole('button', { name: 'New case' }).click();
  const newCase = page.getByRole('form', { name: 'New case' });
  await newCase.getByLabel('Template').selectOption('new-hire');
  await expect(newCase.getByRole('group', { name: 'How they prove who they are' })).toHaveCount(0);
  await newCase.getByLabel('The person’s e-mail address').fill('hire@templateco.test');
  await newCase.getByLabel('Their manager’s name').fill('Pat Lead');
  await newCase.getByLabel('Their manager’s e-mail address').fill('pat.lead@templateco.test');
  await newCase.getByRole('button', { name: 'Open the case' }).click();
  await expect(page.getByRole('heading', { name: 'Case for hire@templateco.test' })).toBeVisible();
  const methods = page.getByRole('list').filter({ hasText: 'Manager' });
  await expect(methods).toContainText('Government ID');
  await expect(methods).toContainText('Manager');
});

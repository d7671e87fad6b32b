import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

test.describe.configure({ timeout: 120_000 });

test('an owner registers an identity provider, copies its secret once, and rotates it', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Idpco');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'idpco-password-e2e-1');

  await page.getByRole('link', { name: 'Identity providers' }).click();
  await expect(page.getByRole('heading', { name: 'Identity providers', level: 1 })).toBeVisible();
  await expect(page.getByText('No identity provider registered yet.')).toBeVisible();
  // The values Okta's form asks for, beside the client's.
  const values = page.getByRole('region', { name: 'What your identity provider asks for' });
  await expect(values).toContainText(`${world.app.baseUrl}/oauth2/par`);
  await expect(values).toContainText(`${world.app.baseUrl}/.well-known/jwks.json`);
  const form = page.getByRole('form', { name: 'Register an identity provider' });
  await form.getByLabel('Name', { exact: true }).fill('Okta');
  await form.getByLabel(/^Redirect URIs/).fill('https://idpco.okta.com/idp/identity-verification/callback');
  await form.getByRole('button', { name: 'Register' }).click();

  const secret = page.getByTestId('client-secret');
  await expect(secret).toHaveText(/^vouch_secret_[0-9A-Za-z]{40}$/);
  const first = await secret.textContent();
  const row = page.getByRole('row').filter({ hasText: 'Okta' });
  await expect(row).toContainText('Test cases');
  await expect(row).toContainText(`secret …${first?.slice(-4)}`);
  await expectAccessible(page);
  await page.getByRole('button', { name: 'Hide secret' }).click();
  await expect(secret).toHaveCount(0);

  await row.getByLabel('The replaced secret of Okta').selectOption({ label: 'Keep working for 1 hour' });
  await row.getByRole('button', { name: 'New secret for Okta' }).click();
  await expect(secret).toHaveText(/^vouch_secret_/);
  expect(await secret.textContent()).not.toBe(first);
  await expect(row).toContainText('the previous one works until');
});

import { systemClock } from '../../server/platform/clock';
import { relyingPartyOf } from '../../server/verification/methods/passkey/ceremonies';
import { enrollPasskey } from '../../test/support/passkeys';
import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

test.describe.configure({ timeout: 120_000 });

test('an owner opens a case that offers a passkey, sees the person’s passkey on its page and revokes it', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Passkeyco');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'passkeyco-password-e2e-1');

  await page.getByRole('link', { name: 'Cases' }).click();
  await page.getByRole('button', { name: 'New case' }).click();
  const newCase = page.getByRole('form', { name: 'New case' });
  await newCase.getByLabel('The person’s e-mail address').fill('returning@passkeyco.test');
  await newCase.getByLabel(/offer the person to save a passkey/).check();
  await newCase.getByRole('button', { name: 'Open the case' }).click();
  await expect(page.getByRole('heading', { name: 'Case for returning@passkeyco.test' })).toBeVisible();
  const passkeys = page.getByRole('region', { name: 'Passkeys of this person' });
  await expect(passkeys).toContainText('No passkey saved.');

  // The person saves one at the end of the case (as the closed page's ceremony does).
  const caseId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
  await enrollPasskey(
    world.database.db,
    { caseId, teamId: team.team_id, livemode: true, subjectEmail: 'returning@passkeyco.test' },
    systemClock,
    relyingPartyOf(world.app.baseUrl),
  );
  await page.reload();
  await expect(passkeys.getByRole('listitem')).toHaveCount(1);
  await expect(passkeys).toContainText('last used never');
  await expectAccessible(page);
  await passkeys.getByRole('button', { name: 'Revoke' }).click();
  await expect(passkeys).toContainText('The passkey is revoked.');
  await expect(passkeys).toContainText('No passkey saved.');
});

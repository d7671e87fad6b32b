import { devMailbox } from '../db/schema';
import { systemClock } from '../server/platform/clock';
import { createTeam } from '../server/teams/manage-teams';
import { apiClient } from '../test/support/api-client';
import type { TwilioMessage } from '../test/support/twilio-stand-in';
import { type CaseWire, expect, expectAccessible, markedPng, test, uniqueEmail } from './support/fixtures';

/**
 * A test-mode case as its subject's phone shows it (decisions: "Test mode and simulation"): marked
 * "Test mode", its text message never reaches the SMS provider (this app sends live texts through
 * the Twilio stand-in) and takes the code 000000, and its ID check is the simulated one.
 */
test.describe('a test-mode case', () => {
  test('says so, takes 000000 by text and a simulated ID check, and closes', async ({
    page,
    database,
    baseUrl,
  }) => {
    const { testKey } = await createTeam(
      database.db,
      { name: 'Sandbox Co', adminEmail: uniqueEmail('sandbox-admin') },
      systemClock,
    );
    const api = apiClient(baseUrl, testKey.token);
    const res = await api.post<CaseWire & { livemode: boolean }>('/v1/cases/', {
      subject_email: uniqueEmail('sandbox'),
      verification_methods: { sms: true, government_id: true },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.livemode).toBe(false);

    await page.goto(res.body.verification_url);
    await expect(page.getByRole('note').filter({ hasText: 'Test mode.' })).toContainText('always 000000');
    // Nothing wider than the screen (the phone project's is 390 px).
    const width = page.viewportSize()?.width ?? 0;
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await expectAccessible(page);

    const phone = `+1 415 555 ${String(Math.floor(Math.random() * 9000) + 1000)}`;
    const e164 = phone.replace(/\s/g, '');
    await page.getByLabel('Mobile number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await expect(page.locator('#notice')).toContainText('We sent a 6-digit code');
    await page.getByLabel('6-digit code').fill('000000');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your phone number is confirmed.');
    // Kept in the dev mailbox, never handed to the SMS provider.
    const texts = (await (await fetch(`${process.env.E2E_INSPECT_URL}/sms`)).json()) as TwilioMessage[];
    expect(texts.filter((t) => t.to === e164)).toEqual([]);
    const kept = await database.db.select({ to: devMailbox.to, text: devMailbox.text }).from(devMailbox);
    expect(kept.find((row) => row.to === e164)?.text).toMatch(/ 000000\. /);

    await page
      .getByLabel('Photo of your ID document')
      .setInputFiles(markedPng('passport.png', 'VOUCH-TEST:NAME=Ada Lovelace;'));
    await page.getByLabel('Selfie', { exact: true }).setInputFiles(markedPng('selfie.png'));
    await page.getByRole('button', { name: 'Submit for checking' }).click();
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    await expectAccessible(page);
    const closed = await api.get<CaseWire>(`/v1/cases/${res.body.id}/`);
    expect(closed.body).toMatchObject({ status: 'closed', subject_name: 'Ada Lovelace' });
  });
});

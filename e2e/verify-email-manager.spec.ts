import { expect, expectAccessible, linkIn, test, uniqueEmail } from './support/fixtures';

test.describe('e-mail step', () => {
  test('the mailed link verifies the step; the shared verification URL never does', async ({
    page,
    vouch,
  }) => {
    const subject = uniqueEmail('email');
    const created = await vouch.createCase({ subject_email: subject, verification_methods: { email: true } });

    await page.goto(created.verification_url);
    await expect(page.getByRole('heading', { level: 1 })).toContainText('Verify your identity for Acme');
    const step = page.locator('[data-step="email"]');
    await expect(step).toContainText('To do');
    await expectAccessible(page);
    expect((await vouch.getCase(created.id)).verification_methods.email?.verified).toBe(false);

    const mail = await vouch.waitForMail(subject);
    const link = linkIn(mail, `${created.verification_url}/email/`);
    // Opening the link (as a mail scanner would) changes nothing: it shows one confirm button.
    const opened = await page.goto(link);
    expect(opened?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Confirm your e-mail address');
    await expectAccessible(page);
    expect((await vouch.getCase(created.id)).verification_methods.email?.verified).toBe(false);
    await page.getByRole('button', { name: 'Confirm my e-mail address' }).click();
    await expect(page).toHaveURL(new RegExp(`${created.verification_url}\\?`));
    await expect(page.locator('#notice')).toHaveText('Thank you, your e-mail address is confirmed.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    await expectAccessible(page);

    const closed = await vouch.getCase(created.id);
    expect(closed.status).toBe('closed');
    expect(closed.verification_methods.email?.verified).toBe(true);
    const events = await vouch.waitForEvents(created.id, [
      'case.created',
      'verification.step_completed',
      'case.closed',
    ]);
    expect(events.find((e) => e.type === 'verification.step_completed')?.data).toMatchObject({
      case_id: created.id,
      public_id: created.public_id,
      method: 'email',
    });
    expect(events.filter((e) => e.type === 'case.closed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'case.closed')?.data).toMatchObject({
      status: 'closed',
      subject_email: subject,
    });

    // Single use: the same link again changes nothing.
    await page.goto(link);
    await expect(page).toHaveURL(created.verification_url);
    await expect(page.locator('#notice')).toHaveText('');
    await expect(page.locator('[data-step="email"]')).toContainText('Done');

    // A forged token on an open case is refused and verifies nothing.
    const other = await vouch.createCase({
      subject_email: uniqueEmail('email'),
      verification_methods: { email: true },
    });
    await page.goto(`${other.verification_url}/email/${'x'.repeat(32)}`);
    await expect(page.locator('#notice')).toHaveText(
      'That e-mail link no longer works: it was used already, or replaced by a newer one. Use the link in the latest e-mail.',
    );
    expect((await vouch.getCase(other.id)).status).toBe('open');
  });

  test('progress appears without a reload when the step completes elsewhere', async ({
    page,
    vouch,
    browser,
  }) => {
    const subject = uniqueEmail('live');
    const created = await vouch.createCase({
      subject_email: subject,
      verification_methods: { email: true, custom_question: true },
      custom_question_text: 'Your badge colour?',
      custom_question_answer: 'Blue',
    });
    await page.goto(created.verification_url);
    await page.getByLabel('Your badge colour?').fill('Bl');
    const mail = await vouch.waitForMail(subject);
    // The subject opens the mail on another device and confirms there.
    const otherDevice = await browser.newContext();
    const other = await otherDevice.newPage();
    await other.goto(linkIn(mail, `${created.verification_url}/email/`));
    await other.getByRole('button', { name: 'Confirm my e-mail address' }).click();
    await expect(other.locator('#notice')).toHaveText('Thank you, your e-mail address is confirmed.');
    await otherDevice.close();
    await expect(page.locator('[data-step="email"]')).toContainText('Done');
    await expect(page.locator('#live')).toContainText('E-mail address: Done');
    // What the subject was typing elsewhere on the page is untouched.
    await expect(page.getByLabel('Your badge colour?')).toHaveValue('Bl');
  });
});

test.describe('manager step', () => {
  test('the manager sees who asks and confirms; the case closes', async ({ page, vouch }) => {
    const manager = uniqueEmail('manager');
    const created = await vouch.createCase({
      subject_email: uniqueEmail('subject'),
      subject_name: 'Jamie Rivera',
      verification_methods: { manager: true },
      manager_name: 'Morgan Lee',
      manager_email: manager,
    });
    await page.goto(created.verification_url);
    await expect(page.locator('[data-step="manager"]')).toContainText('We asked Morgan Lee to confirm you');
    await expectAccessible(page);

    const mail = await vouch.waitForMail(manager, /Please confirm Jamie Rivera/);
    const link = linkIn(mail, `${created.verification_url}/manager/`);
    const managerPage = await page.context().newPage();
    await managerPage.goto(link);
    await expect(managerPage.getByRole('heading', { level: 1 })).toContainText(
      'Please confirm a person for Acme',
    );
    await expect(managerPage.locator('dd').first()).toContainText('Jamie Rivera');
    await expectAccessible(managerPage);
    await managerPage.getByRole('button', { name: /Yes, confirm/ }).click();
    await expect(managerPage.locator('#notice')).toHaveText('Thank you, you confirmed this person.');
    await expectAccessible(managerPage);

    // The subject's page follows without a reload.
    await expect(page.locator('[data-step="manager"]')).toContainText('Morgan Lee confirmed you.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    expect((await vouch.getCase(created.id)).status).toBe('closed');
  });

  test('a decline fails the case with manager_declined', async ({ page, vouch }) => {
    const manager = uniqueEmail('manager');
    const created = await vouch.createCase({
      subject_email: uniqueEmail('subject'),
      verification_methods: { manager: true, custom_question: true },
      custom_question_text: 'Pet?',
      custom_question_answer: 'Rex',
      manager_name: 'Morgan Lee',
      manager_email: manager,
    });
    const mail = await vouch.waitForMail(manager);
    await page.goto(linkIn(mail, `${created.verification_url}/manager/`));
    await page.getByRole('button', { name: 'No, decline' }).click();
    await expect(page.locator('#notice')).toHaveText(
      'You declined this request. The verification has been stopped.',
    );
    const failed = await vouch.getCase(created.id);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'manager_declined' });
    const events = await vouch.waitForEvents(created.id, ['case.failed']);
    expect(events.find((e) => e.type === 'case.failed')?.data).toMatchObject({
      status: 'failed',
      failure_reason: 'manager_declined',
    });

    await page.goto(created.verification_url);
    await expect(page.locator('#case-summary')).toContainText('your manager declined the request');
    await expect(page.locator('form')).toHaveCount(0);
    await expectAccessible(page);
  });

  test('a guessed manager token reveals nothing', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('subject'),
      verification_methods: { manager: true },
      manager_name: 'Morgan Lee',
      manager_email: uniqueEmail('manager'),
    });
    const response = await page.goto(`${created.verification_url}/manager/${'A'.repeat(32)}`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('This link is not valid');
    await expect(page.locator('body')).not.toContainText('Morgan');
  });
});

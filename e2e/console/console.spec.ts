import type { BrowserContext } from '@playwright/test';
import { apiClient } from '../../test/support/api-client';
import {
  acceptInvitation,
  expect,
  expectAccessible,
  type NewTeam,
  screenshot,
  signInAsNewOwner,
  test,
} from './console-fixtures';

/**
 * A newcomer's first hour with the console, in one browser session per step group: the serial
 * mode keeps the shared team (and its signed-in owner) from one test to the next.
 */
// Each step drives several pages, the CLI and a webhook round trip; on two busy cores that can
// take longer than the config's default minute.
test.describe.configure({ mode: 'serial', timeout: 180_000 });

const OWNER_PASSWORD = 'owner-password-e2e-1';

let team: NewTeam;
let caseId: string;
let apiKey: string;
let viewerEmail: string;
let helpdeskCaseId: string;
/**
 * The owner's signed-in browser state after the helpdesk test, for later tests that only look
 * (they need no sign-in of their own).
 */
let ownerSession: Awaited<ReturnType<BrowserContext['storageState']>>;

test('a newcomer signs in with the admin from teams create and creates an API key that works over REST', async ({
  page,
  world,
}) => {
  team = await world.createTeam('Acme');
  await signInAsNewOwner(page, world.app.baseUrl, team, OWNER_PASSWORD);
  // The development stand-ins are announced (this app keeps its mail in the dev mailbox).
  await expect(page.getByRole('region', { name: 'Development mode' })).toContainText('e-mail is not sent');
  await expectAccessible(page);

  await page.getByRole('link', { name: 'API keys' }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await page.getByLabel('New key name').fill('CI server');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('new-api-key').textContent()) ?? '';
  expect(key).toMatch(/^vouch_live_[0-9A-Za-z]{32,}$/);
  await expect(page.getByRole('button', { name: 'Copy key' })).toBeVisible();
  await expectAccessible(page);

  apiKey = key;
  const rest = apiClient(world.app.baseUrl, key);
  const created = await rest.post<{ id: string }>('/v1/cases/', {
    subject_email: 'subject@acme.test',
    verification_methods: { email: true },
  });
  expect(created.status).toBe(201);
  caseId = created.body.id;

  await page.getByRole('button', { name: 'I have copied it' }).click();
  await expect(page.getByTestId('new-api-key')).toHaveCount(0);
  await page.reload();
  const row = page.getByRole('row', { name: /CI server/ });
  await expect(row).toContainText(key.slice(-4));
  await expect(row).not.toContainText('Never');
  await expect(page.getByText(key)).toHaveCount(0);
});

test('a webhook endpoint pointing at a real HTTPS receiver gets a test ping that shows as a success', async ({
  page,
  world,
}) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await expect(page.getByText('No webhook endpoints yet.')).toBeVisible();
  await expectAccessible(page);

  await page.getByRole('button', { name: 'Add an endpoint' }).click();
  await page.getByLabel('URL (HTTPS)').fill('http://insecure.example/hook');
  await page.getByRole('checkbox', { name: 'case.created' }).check();
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  await expect(page.locator('p[role="alert"]')).toContainText('https');
  // The error names its request, for a report to support.
  await expect(page.locator('p[role="alert"]')).toContainText(/Request id: req_[\w-]{24}/);

  const url = world.receiver.url(`/hook-${test.info().project.name}`);
  await page.getByLabel('URL (HTTPS)').fill(url);
  await page.getByLabel('Description (optional)').fill('Receiver');
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  const secret = (await page.getByTestId('signing-secret').textContent()) ?? '';
  expect(secret).toMatch(/^whsec_/);
  await expectAccessible(page);

  await page.getByRole('link', { name: url }).click();
  await expect(page.getByRole('heading', { name: 'Endpoint' })).toBeVisible();
  await page.getByRole('button', { name: 'Send test' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'test ping' })).toContainText(
    'test ping was queued',
  );
  const [ping] = await world.receiver.waitFor(new URL(url).pathname, 1);
  expect(ping?.headers['x-service-signature']).toBeTruthy();
  expect(JSON.parse(ping?.body ?? '{}')).toMatchObject({ type: 'ping' });

  await page.getByRole('link', { name: 'Deliveries to this endpoint' }).click();
  await expect(page.getByRole('heading', { name: 'Delivery log' })).toBeVisible();
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(page.getByRole('row', { name: /ping/ })).toContainText('success', { timeout: 1000 });
  }).toPass({ timeout: 20_000 });
  await expectAccessible(page);

  await page.getByRole('link', { name: 'ping' }).click();
  await expect(page.getByRole('heading', { name: 'Delivery of ping' })).toBeVisible();
  await expect(
    page.getByRole('table', { name: 'Attempts' }).getByRole('row', { name: /HTTP 200/ }),
  ).toBeVisible();
  // The payload shown is exactly what the receiver got.
  await expect(page.getByTestId('delivery-payload')).toHaveText(ping?.body ?? 'no ping');
  await expectAccessible(page);

  await page.goto(`${world.app.baseUrl}/console/audit`);
  await expect(page.getByText('webhook_endpoint.created')).toBeVisible();
  await expect(page.getByText('webhook_endpoint.test_sent')).toBeVisible();
  await expectAccessible(page);
});

test('revoking the key makes the next REST call answer 401', async ({ page, world }) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'API keys' }).click();
  const rest = apiClient(world.app.baseUrl, apiKey);
  expect((await rest.get('/v1/account/')).status).toBe(200);

  page.once('dialog', (dialog) => dialog.accept());
  await page
    .getByRole('row', { name: /CI server/ })
    .getByRole('button', { name: /Revoke/ })
    .click();
  await expect(page.getByRole('row', { name: /CI server/ })).toContainText('Revoked');
  const after = await rest.get<{ code: string }>('/v1/account/');
  expect(after.status).toBe(401);
  expect(after.body.code).toBe('UNAUTHORIZED');
});

test('cases, their detail with the copy-link button, usage and the dev mailbox', async ({ page, world }) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('meter', { name: 'E-mail allowance used' })).toHaveAttribute('value', '1');
  await expect(page.getByRole('img', { name: /1 created/ })).toBeVisible();
  // The team's id, which the operator's CLI takes as --team, is on the page and copies.
  await expect(page.getByText(team.team_id)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Copy team id' })).toBeVisible();

  await page.getByRole('link', { name: 'Cases' }).click();
  await page.getByLabel('Subject e-mail').fill('subject@acme.test');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toBeVisible();
  await expectAccessible(page);
  await page.getByRole('link', { name: 'subject@acme.test' }).click();
  await expect(page.getByRole('heading', { name: 'Case for subject@acme.test' })).toBeVisible();
  await expect(page.getByText('case.created')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Copy verification link' })).toBeVisible();
  await expectAccessible(page);

  await page.getByRole('link', { name: 'Mailbox' }).click();
  const mail = page.getByRole('article').filter({ hasText: 'subject@acme.test' });
  await expect(mail).toBeVisible();
  await expect(mail.getByRole('link', { name: /\/v\// })).toBeVisible();
  await expectAccessible(page);
});

test('the helpdesk opens a case, watches the caller complete it live, and resends, cancels and erases cases, all audited', async ({
  page,
  context,
  world,
}) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Cases' }).click();
  await page.getByRole('button', { name: 'New case' }).click();
  await page.getByLabel('The person’s e-mail address').fill('caller@acme.test');
  await page.getByLabel('Their name (optional)').fill('Casey Caller');
  await page.getByRole('checkbox', { name: 'E-mail link' }).uncheck();
  await page.getByRole('checkbox', { name: 'A question only they can answer' }).check();
  await page.getByLabel('The question').fill('Which office do you sit in?');
  await page.getByLabel(/Its answer/).fill('Harbour House');
  await expectAccessible(page);
  await page.getByRole('button', { name: 'Open the case' }).click();
  await expect(page.getByRole('heading', { name: 'Case for caller@acme.test' })).toBeVisible();
  await expect(page.locator('.c-status').first()).toHaveText('open');
  helpdeskCaseId = page.url().split('/').at(-1) ?? '';

  // The agent reads the link out (or copies it); the caller answers on their own device.
  const created = await apiClient(world.app.baseUrl, team.api_key).get<{ verification_url: string }>(
    `/v1/cases/${helpdeskCaseId}/`,
  );
  const caller = await context.newPage();
  await caller.goto(created.body.verification_url);
  await caller.getByLabel('Which office do you sit in?').fill('harbour  house');
  await caller.getByRole('button', { name: 'Confirm answer' }).click();
  await expect(caller.locator('#case-summary')).toContainText('All steps are done');
  await caller.close();
  // The console follows without a reload, to the second, in the order things happened.
  await expect(page.locator('.c-status').first()).toHaveText('closed', { timeout: 15_000 });
  const timeline = page.locator('.c-timeline li');
  await expect(timeline).toHaveCount(3);
  await expect(timeline.nth(0)).toContainText('case.created');
  await expect(timeline.nth(1)).toContainText('verification.step_completed');
  await expect(timeline.nth(2)).toContainText('case.closed');
  await expect(timeline.nth(2)).toContainText(/\d{1,2}:\d{2}:\d{2}( [AP]M)? UTC/);

  // A second caller lost their mail: resend, then cancel, then erase.
  await page.goto(`${world.app.baseUrl}/console/cases`);
  await page.getByRole('button', { name: 'New case' }).click();
  await page.getByLabel('The person’s e-mail address').fill('lost-mail@acme.test');
  await page.getByRole('button', { name: 'Open the case' }).click();
  await expect(page.getByRole('heading', { name: 'Case for lost-mail@acme.test' })).toBeVisible();
  await page.getByRole('button', { name: 'Mail the links again' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'New links were mailed' })).toBeVisible();
  await page.getByRole('button', { name: 'Cancel case' }).click();
  await expect(page.locator('.c-status').first()).toHaveText('expired');
  await expect(page.getByText('Canceled', { exact: true })).toBeVisible();
  await page.getByRole('button', { name: 'Erase personal data' }).click();
  await page.getByRole('button', { name: 'Erase for good' }).click();
  await expect(page.getByRole('heading', { name: /Case for redacted\+.+@redacted\.invalid/ })).toBeVisible();
  await expect(page.getByText('Personal data erased')).toBeVisible();
  await expectAccessible(page);

  // The team keeps ended cases 30 days, then the person's data goes.
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('radio', { name: /For a number of days/ }).check();
  await page.getByLabel('Days', { exact: true }).fill('30');
  await page.getByRole('button', { name: 'Save retention' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'over 30 days ago' })).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Days', { exact: true })).toHaveValue('30');
  await expectAccessible(page);

  await page.getByRole('link', { name: 'Audit log' }).click();
  for (const action of [
    'case.created',
    'case.links_resent',
    'case.canceled',
    'case.redacted',
    'team.retention_changed',
  ]) {
    await expect(page.getByText(action, { exact: true }).first()).toBeVisible();
  }
  ownerSession = await context.storageState();
});

test('a closed case says when it ended and whom it is for, and a copied link is said once', async ({
  browser,
  world,
}, testInfo) => {
  const context = await browser.newContext({ storageState: ownerSession });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  await page.goto(`${world.app.baseUrl}/console/cases/${helpdeskCaseId}`);
  await expect(page.getByRole('heading', { name: 'Case for caller@acme.test' })).toBeVisible();
  const fact = (name: string) =>
    page.locator('.c-facts > div').filter({ has: page.getByRole('term').getByText(name, { exact: true }) });
  // Each finding is checked on its own (soft), so one does not hide another.
  // The name the helpdesk gave when it opened the case.
  await expect.soft(fact('Name').getByRole('definition')).toHaveText('Casey Caller');
  // An ended case has no deadline to show: it shows when it closed, to the second the timeline says.
  await expect.soft(fact('Expires')).toHaveCount(0);
  const closedAt = page.locator('.c-timeline li').filter({ hasText: 'case.closed' }).locator('time');
  await expect
    .soft(fact('Closed').getByRole('definition'))
    .toHaveText((await closedAt.textContent()) ?? 'no time');

  // Copying says so once, in a live region (for screen readers), and copies the link.
  await page.getByRole('button', { name: 'Copy verification link' }).click();
  await expect(page.locator('[role="status"], [aria-live]').filter({ hasText: /copied/i })).toHaveCount(1);
  expect
    .soft(((await page.getByRole('main').textContent()) ?? '').match(/copied/gi), 'said once')
    .toHaveLength(1);
  await screenshot(page, testInfo, 'case-closed');
  const { body } = await apiClient(world.app.baseUrl, team.api_key).get<{ verification_url: string }>(
    `/v1/cases/${helpdeskCaseId}/`,
  );
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(body.verification_url);
  await expectAccessible(page);
  await context.close();
});

test('a viewer invited by e-mail can read but not change anything, in the UI and on the server', async ({
  page,
  browser,
  world,
}) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Members' }).click();
  viewerEmail = `viewer-${test.info().project.name}@acme.test`;
  await page.getByLabel('E-mail to invite').fill(viewerEmail);
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Invite' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Invitation sent to' })).toContainText(
    `Invitation sent to ${viewerEmail}`,
  );
  // Not a member until they accept: listed as pending, with a way to withdraw it.
  const pendingRow = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row', {
    name: new RegExp(viewerEmail),
  });
  await expect(pendingRow).toBeVisible();
  await expect(pendingRow.getByRole('button', { name: /Withdraw/ })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Team members' }).getByText(viewerEmail)).toHaveCount(0);
  await expectAccessible(page);

  const viewer = await acceptInvitation(browser, await world.invitationLinkFor(viewerEmail), 'Acme');
  await viewer.goto(`${world.app.baseUrl}/console/keys`);
  await expect(viewer.getByRole('row', { name: /CI server/ })).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'Create key' })).toHaveCount(0);
  // The dev mailbox holds the links that complete the team's verifications: not for viewers.
  await expect(viewer.getByRole('link', { name: 'API keys' })).toBeVisible();
  await expect(viewer.getByRole('link', { name: 'Mailbox' })).toHaveCount(0);
  await expect(viewer.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
  // Each page first shows that it knows the viewer's role (the session has loaded), then lacks the
  // buttons: right after navigation they would be missing while the page still loads.
  await viewer.goto(`${world.app.baseUrl}/console/webhooks`);
  await expect(viewer.getByText('You have read-only access (viewer).')).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'Add an endpoint' })).toHaveCount(0);
  await viewer.goto(`${world.app.baseUrl}/console/members`);
  await expect(viewer.getByText('You have read-only access (viewer).')).toBeVisible();
  await expect(viewer.getByRole('row', { name: new RegExp(viewerEmail) })).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'Invite' })).toHaveCount(0);
  await viewer.goto(`${world.app.baseUrl}/console/cases/${helpdeskCaseId}`);
  await expect(viewer.getByRole('heading', { name: 'Case for caller@acme.test' })).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'Erase personal data' })).toHaveCount(0);
  await viewer.goto(`${world.app.baseUrl}/console/cases`);
  await expect(viewer.getByRole('heading', { name: 'Cases', exact: true })).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'New case' })).toHaveCount(0);

  // The server refuses too, whatever the page shows: straight at the tRPC route with the
  // viewer's session cookie.
  for (const [path, input] of [
    ['console.keys.create', { name: 'sneaky' }],
    ['console.members.invite', { email: 'friend@acme.test', role: 'admin' }],
    ['console.webhooks.create', { url: world.receiver.url('/sneaky'), events: ['case.created'] }],
    ['console.cases.create', { subject_email: 'sneaky@acme.test', verification_methods: { email: true } }],
    ['console.cases.redact', { id: helpdeskCaseId }],
    ['console.team.setRetention', { retention_days: 1 }],
  ] as const) {
    const response = await viewer.request.post(`${world.app.baseUrl}/api/trpc/${path}`, { data: input });
    expect(response.status()).toBe(403);
    expect(((await response.json()) as { error: { data: { appCode: string } } }).error.data.appCode).toBe(
      'FORBIDDEN',
    );
  }
  await viewer.context().close();
});

test("another team's console never shows this team's data", async ({ page, world }) => {
  // Each page is checked once it has loaded, and shows this team's own rows first: a page still
  // "Loading…" shows nobody's rows, and would prove nothing.
  const other = await world.createTeamQuickly('Bravo');
  const bravoSubject = `subject-${test.info().project.name}@bravo.test`;
  const created = await apiClient(world.app.baseUrl, other.api_key).post('/v1/cases/', {
    subject_email: bravoSubject,
    verification_methods: { email: true },
  });
  expect(created.status).toBe(201);
  await signInAsNewOwner(page, world.app.baseUrl, other, 'bravo-password-e2e-1');

  await page.goto(`${world.app.baseUrl}/console/cases/${caseId}`);
  await expect(page.locator('p[role="alert"]')).toContainText('No case with this id in your team.');
  await page.goto(`${world.app.baseUrl}/console/cases`);
  await expect(page.getByRole('link', { name: bravoSubject })).toBeVisible();
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toHaveCount(0);

  await page.goto(`${world.app.baseUrl}/console/keys`);
  await expect(page.getByRole('row', { name: /Default key/ })).toHaveCount(1);
  await expect(page.getByRole('row', { name: /CI server/ })).toHaveCount(0);
  // An audited change of Bravo's own, for the audit page below.
  await page.getByLabel('New key name').fill('Bravo key');
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByTestId('new-api-key')).toBeVisible();

  await page.goto(`${world.app.baseUrl}/console/webhooks`);
  await expect(page.getByText('No webhook endpoints yet.')).toBeVisible();

  await page.goto(`${world.app.baseUrl}/console/mailbox`);
  await expect(async () => {
    await page.reload();
    await expect(page.getByRole('article').filter({ hasText: bravoSubject })).toBeVisible({ timeout: 1000 });
  }).toPass();
  await expect(page.getByText('subject@acme.test')).toHaveCount(0);

  await page.goto(`${world.app.baseUrl}/console/members`);
  await expect(page.getByRole('row', { name: new RegExp(other.admin_email) })).toBeVisible();
  await expect(page.getByText(team.admin_email)).toHaveCount(0);

  await page.goto(`${world.app.baseUrl}/console/audit`);
  await expect(page.getByText('api_key.created')).toBeVisible();
  await expect(page.getByText('webhook_endpoint.created')).toHaveCount(0);
});

test('the sign-in page is accessible and explains a bad password', async ({ page, world }) => {
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await expectAccessible(page);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill('wrong-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('p[role="alert"]')).toContainText('do not match');
  await page.goto(`${world.app.baseUrl}/console/keys`);
  await expect(page).toHaveURL(/\/console\/sign-in$/);
});

test('the Test data switch shows the test keys’ cases only, and says so', async ({ page, world }) => {
  const testSubject = `sandbox-${test.info().project.name}@acme.test`;
  const created = await apiClient(world.app.baseUrl, team.test_api_key).post('/v1/cases/', {
    subject_email: testSubject,
    verification_methods: { email: true },
  });
  expect(created.status, created.text).toBe(201);
  await page.goto(`${world.app.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail').fill(team.admin_email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Usage and account' })).toBeVisible();
  await page.goto(`${world.app.baseUrl}/console/cases`);
  // Live first: the live case is listed (so the page has loaded), the test one is not.
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toBeVisible();
  await expect(page.getByRole('link', { name: testSubject })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Test mode' })).toHaveCount(0);

  await page.getByLabel('Test data').check();
  await expect(page.getByRole('region', { name: 'Test mode' })).toContainText('Viewing test data');
  await expect(page.getByRole('link', { name: testSubject })).toBeVisible();
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toHaveCount(0);
  await expectAccessible(page);

  await page.getByLabel('Test data').uncheck();
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Test mode' })).toHaveCount(0);
});

test('opening the console signed out asks nothing that answers 401, and logs no error', async ({
  page,
  world,
}) => {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() === 401) problems.push(`401: ${response.request().method()} ${response.url()}`);
  });
  // The console's address (as `teams create` prints it), a page of it, and the sign-in page itself.
  for (const path of ['/console', '/console/cases', '/console/sign-in']) {
    await page.goto(`${world.app.baseUrl}${path}`);
    await expect(page.getByRole('heading', { name: 'Sign in to the Vouch console' })).toBeVisible();
    await expect(page).toHaveURL(/\/console\/sign-in$/);
    await page.waitForLoadState('networkidle');
  }
  expect(problems).toEqual([]);
});

test('a team with only test cases is told so on its empty live list, with the switch to them', async ({
  page,
  world,
}, testInfo) => {
  const sandbox = await world.createTeamQuickly('Sandbox');
  const testSubject = `only-test-${testInfo.project.name}@sandbox.test`;
  const created = await apiClient(world.app.baseUrl, sandbox.test_api_key).post('/v1/cases/', {
    subject_email: testSubject,
    verification_methods: { email: true },
  });
  expect(created.status, created.text).toBe(201);
  await signInAsNewOwner(page, world.app.baseUrl, sandbox, 'sandbox-password-e2e-1');
  await page.getByRole('link', { name: 'Cases' }).click();
  const empty = page.locator('.c-empty');
  await expect(empty).toContainText('No live cases match.');
  await expect(empty).toContainText('Your test data has cases that match');
  await expectAccessible(page);
  await screenshot(page, testInfo, 'cases-empty-live-hint');

  await empty.getByRole('button', { name: 'Show test data' }).click();
  await expect(page.getByRole('region', { name: 'Test mode' })).toContainText('Viewing test data');
  await expect(page.getByRole('link', { name: testSubject })).toBeVisible();
  await expect(page.getByLabel('Test data')).toBeChecked();

  // No hint where the other mode has nothing that matches either.
  await page.getByLabel('Status').selectOption('closed');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(empty).toContainText('No test cases match.');
  await expect(empty.getByRole('button')).toHaveCount(0);
});

test('Cases: each form has its heading, and opening a case outweighs searching', async ({
  browser,
  world,
}, testInfo) => {
  const context = await browser.newContext({ storageState: ownerSession });
  const page = await context.newPage();
  await page.goto(`${world.app.baseUrl}/console/cases`);
  await expect(page.getByRole('link', { name: 'subject@acme.test' })).toBeVisible();
  await page.getByRole('button', { name: 'New case' }).click();
  const main = page.getByRole('main');
  await expect(main.getByRole('heading', { level: 2, name: 'New case' })).toBeVisible();
  await expect(main.getByRole('heading', { level: 2, name: 'Find cases' })).toBeVisible();
  await expect(page.getByRole('form', { name: 'New case' })).toBeVisible();
  await expect(page.getByRole('form', { name: 'Find cases' })).toBeVisible();
  const look = (name: string) =>
    page.getByRole('button', { name, exact: true }).evaluate((element) => ({
      background: getComputedStyle(element).backgroundColor,
      width: element.getBoundingClientRect().width,
    }));
  for (const [width, name] of [
    [1280, 'cases-desktop'],
    [375, 'cases-phone'],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    const open = await look('Open the case');
    const search = await look('Search');
    expect(search.background, `${name}: Search is not filled like the primary action`).not.toBe(
      open.background,
    );
    expect(search.width, `${name}: Search is no wider than Open the case`).toBeLessThanOrEqual(open.width);
    await screenshot(page, testInfo, name);
  }
  await expectAccessible(page);
  await context.close();
});

test('works at phone width: the navigation wraps and no page scrolls sideways', async ({
  browser,
  world,
}) => {
  const context = await browser.newContext({ storageState: ownerSession });
  const page = await context.newPage();
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(`${world.app.baseUrl}/console`);
  await expect(page.getByRole('heading', { name: 'Usage and account' })).toBeVisible();
  for (const path of [
    '/console',
    '/console/cases',
    '/console/keys',
    '/console/webhooks',
    '/console/members',
    '/console/audit',
    `/console/cases/${helpdeskCaseId}`,
  ]) {
    await page.goto(`${world.app.baseUrl}${path}`);
    await expect(page.getByRole('navigation', { name: 'Console' })).toBeVisible();
    await expect(page.locator('main h1')).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
  }
  // The detail pages too: an endpoint, the delivery log and one delivery.
  const noSidewaysScroll = async (what: string) => {
    await expect(page.locator('main h1')).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${what} scrolls sideways`).toBeLessThanOrEqual(0);
  };
  await page.goto(`${world.app.baseUrl}/console/webhooks`);
  const endpointLink = page.locator('main table a[href^="/console/webhooks/"]').first();
  await expect(endpointLink).toBeVisible();
  await page.goto(`${world.app.baseUrl}${await endpointLink.getAttribute('href')}`);
  await noSidewaysScroll('the endpoint page');
  await page.goto(`${world.app.baseUrl}/console/webhooks/deliveries`);
  await noSidewaysScroll('the delivery log');
  const deliveryLink = page.locator('main a[href^="/console/webhooks/deliveries/"]').first();
  await expect(deliveryLink).toBeVisible();
  await deliveryLink.click();
  await expect(page).toHaveURL(/\/console\/webhooks\/deliveries\/[0-9a-f-]{36}$/);
  await noSidewaysScroll('a delivery page');

  // A table's actions lie within the screen's width as the page opens, not past the edge of a
  // table that would have to be scrolled sideways to find them.
  for (const [path, name] of [
    ['/console/keys', /^Revoke/],
    ['/console/members', /^Remove/],
  ] as const) {
    await page.goto(`${world.app.baseUrl}${path}`);
    const action = page.getByRole('button', { name }).first();
    await expect(action).toBeVisible();
    const edges = await action.evaluate((element) => {
      const box = element.getBoundingClientRect();
      return { left: box.left, right: box.right, width: window.innerWidth };
    });
    expect(edges.left, `${path}: ${name}`).toBeGreaterThanOrEqual(0);
    expect(edges.right, `${path}: ${name}`).toBeLessThanOrEqual(edges.width);
  }
  // Keyboard: the skip link is the first stop and lands on the page's content.
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await context.close();
});

import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

// Several pages, an upload and the worker's run on two busy cores.
test.describe.configure({ timeout: 120_000 });

const FILE = [
  'Email,Name,Methods',
  'ana.lopez@wave.test,Ana López,email',
  'not-an-address,Bo Chen,email',
  'cy.diaz@wave.test,Cy Díaz,email manager',
  'di.evans@wave.test,Di Evans,',
  'ed.fox@wave.test,"Fox, Ed",email',
].join('\r\n');

test('an owner imports a CSV: the rows are checked first, the import runs with a progress bar, and its result downloads', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Importer');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'importer-password-e2e-1');

  await page.getByRole('link', { name: 'Cases' }).click();
  await page.getByRole('link', { name: 'Import from CSV' }).click();
  await expect(page.getByRole('heading', { name: 'Import cases from a CSV file' })).toBeVisible();
  await expectAccessible(page);
  await page.getByLabel('CSV file').setInputFiles({
    name: 'october-hires.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(FILE),
  });
  await page.getByRole('button', { name: 'Check the rows' }).click();

  // The check: what will happen, row by row, and nothing created yet.
  await expect(page.getByRole('heading', { name: 'Import of october-hires.csv' })).toBeVisible();
  await expect(
    page.getByText('5 rows: 3 passed the check for live cases, 2 refused by the check.'),
  ).toBeVisible();
  // What starting it will do, priced as the creation will: the trial's 50 e-mail units cover them.
  await expect(page.getByRole('region', { name: 'What starting it will do' })).toContainText(
    '50 e-mail units are left and the top-up balance is $0.00: 3 rows can become cases.',
  );
  const refused = page.getByRole('table', { name: 'Rows refused' });
  await expect(refused.getByRole('row')).toHaveCount(3);
  await expect(refused.getByRole('row').nth(1)).toContainText('3');
  await expect(refused.getByRole('row').nth(1)).toContainText('subject_email');
  await expect(refused.getByRole('row').nth(2)).toContainText('manager_email');
  await expectAccessible(page);
  const casesBefore = await world.database
    .sql`select count(*)::int as n from cases where team_id = ${team.team_id}`;
  expect(casesBefore[0]?.n).toBe(0);

  await page.getByRole('button', { name: 'Create 3 cases' }).click();
  await expect(page.getByRole('heading', { name: 'Finished' })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('status').filter({ hasText: 'created' })).toContainText('3 created of 3');
  await expect(page.getByRole('progressbar', { name: 'Finished' })).toHaveAttribute('value', '3');
  await expectAccessible(page);

  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download the result (CSV)' }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('october-hires-result.csv');
  const result = parse(await readFile(await download.path()), { columns: true }) as Array<
    Record<string, string>
  >;
  expect(result.map((row) => [row.line, row.subject_email, row.outcome])).toEqual([
    ['2', 'ana.lopez@wave.test', 'created'],
    ['3', 'not-an-address', 'refused'],
    ['4', 'cy.diaz@wave.test', 'refused'],
    ['5', 'di.evans@wave.test', 'created'],
    ['6', 'ed.fox@wave.test', 'created'],
  ]);
  expect(result[0]?.verification_url).toMatch(/\/v\/[A-Za-z0-9_-]+$/);

  // The cases are there, each with its mail, and the import is in the audit log.
  await page.getByRole('link', { name: 'Cases' }).click();
  await expect(page.getByRole('link', { name: 'ed.fox@wave.test' })).toBeVisible();
  await page.getByRole('link', { name: 'Audit log' }).click();
  await expect(page.getByText('case_import.started')).toBeVisible();
  await expect(page.getByText('case_import.finished')).toBeVisible();
  const mailed = async () =>
    (await world.database.sql`select count(*)::int as n from dev_mailbox where "to" like '%@wave.test'`)[0]
      ?.n;
  await expect.poll(mailed, { timeout: 15_000 }).toBe(3);

  // At phone width, neither the upload page nor an import's page scrolls sideways.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(`${world.app.baseUrl}/console/cases/import`);
  await expect(page.getByRole('link', { name: 'october-hires.csv' })).toBeVisible();
  await page.getByRole('link', { name: 'october-hires.csv' }).click();
  await expect(page.getByRole('heading', { name: 'Finished' })).toBeVisible();
  for (const path of ['/console/cases/import', new URL(page.url()).pathname]) {
    await page.goto(`${world.app.baseUrl}${path}`);
    await expect(page.locator('main h1')).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
  }
});

test('in test mode the import says what a test import does: nothing charged, no mail out, every row a test case', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Rehearsal');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'importer-password-e2e-2');
  await page.getByRole('link', { name: 'Cases' }).click();
  // The switch reloads the page it is on: be on Cases first, or the reload lands on the overview.
  await expect(page.getByRole('heading', { name: 'Cases', level: 1 })).toBeVisible();
  await page.getByLabel('Test data').check();
  await expect(page.getByRole('region', { name: 'Test mode' })).toContainText('Viewing test data');
  await page.getByRole('link', { name: 'Import from CSV' }).click();
  await expect(page.getByRole('heading', { name: 'Import cases from a CSV file' })).toBeVisible();
  const main = page.locator('main');
  await expect(main).toContainText('opened in test mode');
  await expect(main).toContainText('test mode charges nothing and counts no usage');
  await expect(main).toContainText('never to the subject or a manager');
  await expect(main).not.toContainText('unit of your plan');
  await page.getByLabel('CSV file').setInputFiles({
    name: 'rehearsal.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('Email,Methods\r\nana@rehearsal.test,email\r\nbo@rehearsal.test,email sms\r\n'),
  });
  await page.getByRole('button', { name: 'Check the rows' }).click();
  await expect(page.getByRole('region', { name: 'What starting it will do' })).toContainText(
    'Test mode charges nothing: all 2 rows can become test cases.',
  );
  await expect(page.getByRole('region', { name: 'What starting it will do' })).not.toContainText('units');
});

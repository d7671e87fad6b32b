import { readFile } from 'node:fs/promises';
import type { JWK } from 'jose';
import { pdfAttachments } from '@/server/evidence/pdf-attachment';
import { verifyEvidence } from '@/server/evidence/verify-evidence';
import { expect, expectAccessible, signInAsNewOwner, test } from './console-fixtures';

test.describe.configure({ timeout: 120_000 });

test('an owner downloads a case’s evidence as PDF and signed JSON, both verify, and reveals the evidence key', async ({
  page,
  world,
}) => {
  const team = await world.createTeamQuickly('Evidenceco');
  await signInAsNewOwner(page, world.app.baseUrl, team, 'evidenceco-password-e2e-1');
  const created = await fetch(`${world.app.baseUrl}/v1/cases/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${team.api_key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      subject_email: 'layla@evidenceco.test',
      subject_name: 'ليلى الحسن',
      verification_methods: { email: true },
    }),
  });
  const { id, public_id } = (await created.json()) as { id: string; public_id: string };
  const keys = async () =>
    ((await (await fetch(`${world.app.baseUrl}/.well-known/jwks.json`)).json()) as { keys: JWK[] }).keys;

  await page.goto(`${world.app.baseUrl}/console/cases/${id}`);
  const evidence = page.getByRole('region', { name: 'Evidence record' });
  await expect(evidence).toContainText('provisional while the case is open');

  const pdfDownload = page.waitForEvent('download');
  await evidence.getByRole('button', { name: 'Download PDF' }).click();
  const pdf = await pdfDownload;
  expect(pdf.suggestedFilename()).toBe(`evidence-${public_id}.pdf`);
  const attached = await pdfAttachments(await readFile(await pdf.path()));
  const fromPdf = await verifyEvidence(
    new TextDecoder().decode(attached.get(`evidence-${public_id}.json`)),
    await keys(),
  );
  expect(fromPdf).toMatchObject({
    ok: true,
    record: { provisional: true, case: { id, subject_name: 'ليلى الحسن' } },
  });

  const jsonDownload = page.waitForEvent('download');
  await evidence.getByRole('button', { name: 'Download signed JSON' }).click();
  const json = await jsonDownload;
  expect(json.suggestedFilename()).toBe(`evidence-${public_id}.json`);
  expect(await verifyEvidence(await readFile(await json.path(), 'utf8'), await keys())).toMatchObject({
    ok: true,
  });
  await expectAccessible(page);

  // Both downloads are in the audit log, where the owner also finds the evidence key.
  await page.getByRole('link', { name: 'Audit log' }).click();
  await expect(page.getByText('case.evidence_downloaded')).toHaveCount(2);
  const keySection = page.getByRole('region', { name: 'Evidence key' });
  await keySection.getByRole('button', { name: 'Show the evidence key' }).click();
  await expect(keySection.getByTestId('evidence-key')).toHaveText(/^[A-Za-z0-9_-]{43}$/);
  await expectAccessible(page);
});

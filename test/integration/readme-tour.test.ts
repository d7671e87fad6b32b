import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { markdownSection, newcomerBash, shellBlocks } from '@/test/support/newcomer-shell';

/**
 * The README's five-minute tour runs as written: its shell blocks, copied in order into one shell
 * (all but the one that starts the service, which this test has started, and `listen`, which runs
 * until stopped), create a team with the operator's command, open a live case and close a test
 * case on the service that served them. Only the service's address differs from the README's.
 */
let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** The tour: the README from its heading to the next `## ` heading. */
function tour(): string {
  const section = markdownSection(readFileSync('README.md', 'utf8'), '## A five-minute tour');
  expect(section).not.toBeNull();
  return section ?? '';
}

describe("the README's five-minute tour", () => {
  it('runs as written, block after block: a team, a live case, a closed test case', {
    timeout: 90_000,
  }, async () => {
    const blocks = shellBlocks(tour());
    const runnable = blocks.filter((block) => !/^npm start\b/m.test(block) && !/\blisten\b/.test(block));
    expect(blocks.length - runnable.length).toBe(2);
    expect(runnable.length).toBeGreaterThanOrEqual(3);
    const script = runnable.join('\n');
    expect(script).toContain('export VOUCH_URL=http://localhost:3000\n');
    // On a newcomer's machine the CLI finds `npm start`'s embedded database by itself; here, the test's.
    const run = await newcomerBash(
      `set -e\n${script.replace('http://localhost:3000', app.baseUrl)}\nprintf '\\nCASE=%s\\n' "$CASE"`,
      { DATABASE_URL: database.url },
    );
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    // The team's keys, the ping, the live case opened, listed and counted, the test case closed.
    expect(run.stdout).toMatch(/"api_key":"vouch_live_/);
    expect(run.stdout).toContain('"subject_email":"jane@acme.example"');
    expect(run.stdout).toMatch(/"status":"closed"/);
    const caseId = /\nCASE=(\S+)\n$/.exec(run.stdout)?.[1];
    const [row] = await database.sql<{ status: string; livemode: boolean }[]>`
      select status, livemode from cases where id = ${caseId ?? ''}`;
    expect(row).toEqual({ status: 'closed', livemode: false });
    const [live] = await database.sql<{ subject_email: string }[]>`
      select subject_email from cases where livemode order by created_at`;
    expect(live?.subject_email).toBe('jane@acme.example');
  });
});

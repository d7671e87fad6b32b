import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { markdownSection, newcomerBash, shellBlocks } from '@/test/support/newcomer-shell';

/**
 * The quick start that /docs shows (the guides travel in the OpenAPI document it renders) runs as
 * written: its shell blocks, copied in order into one shell with only the test key filled in,
 * close a case on the service that served them.
 */
let database: TestDatabase;
let app: RunningApp;
let testKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(
    database.db,
    { name: 'Quick start', adminEmail: 'admin@quick-start.test' },
    systemClock,
  );
  testKey = created.testKey.token;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** The quick start as /docs renders it: its section of the document's description. */
async function quickStart(): Promise<{ section: string; serverUrl: string }> {
  const res = await apiClient(app.baseUrl).get<{
    info: { description: string };
    servers: Array<{ url: string }>;
  }>('/v1/openapi.json');
  expect(res.status).toBe(200);
  // From its heading to the next guide's: a `# ` line outside a code block.
  const section = markdownSection(res.body.info.description, '# Quick start with a test key');
  expect(section).not.toBeNull();
  return {
    section: section ?? '',
    serverUrl: res.body.servers[0]?.url ?? '',
  };
}

describe('the /docs quick start', () => {
  it("names this service's own URL, the one its Server box shows", async () => {
    const { section, serverUrl } = await quickStart();
    expect(serverUrl).toBe(app.baseUrl);
    expect(section).toContain(`export VOUCH_URL=${app.baseUrl}\n`);
    expect(section).not.toContain('{base_url}');
  });

  it('runs as written, block after block, and closes a test case', { timeout: 60_000 }, async () => {
    const { section } = await quickStart();
    const blocks = shellBlocks(section);
    expect(blocks.length).toBeGreaterThan(0);
    // The one thing a reader fills in: the key, as the guide's first block says.
    const script = blocks.join('\n').replace('vouch_test_...', testKey);
    expect(script).toContain(`export VOUCH_TEST_KEY=${testKey}`);

    const run = await newcomerBash(`${script}\nprintf '\\nCASE_ID=%s\\n' "$CASE_ID"`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const caseId = /\nCASE_ID=(\S+)\n$/.exec(run.stdout)?.[1];
    expect(caseId ?? '', run.stdout).toMatch(/^[A-Za-z0-9_-]{16,}$/);

    const client = apiClient(app.baseUrl, testKey);
    const read = await client.get<{ status: string; livemode: boolean }>(`/v1/cases/${caseId}/`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ status: 'closed', livemode: false });
    // What the blocks printed: the closed case, then its events, case.closed among them; then
    // the batch's two results, a case and the second item's error.
    expect(run.stdout).toContain('"case.closed"');
    expect(run.stdout).toMatch(
      /created [0-9a-f-]{36}\n422 VALIDATION_ERROR: subject_email: must be an e-mail/,
    );
  });
});

/**
 * The other pages' shell blocks that run as written on this machine: test mode's two calls (with
 * the reader's VOUCH_URL and test key set, as the page's reader has them) and the operator CLI's
 * help lines. Blocks with a placeholder to fill in (a file, a team id), or that need what a test
 * cannot have here (a cluster, a registry, Compose), are only checked for their commands
 * (scripts/docs.test.ts).
 */
describe("the guides' other runnable blocks", () => {
  const blocksOf = (file: string) => shellBlocks(readFileSync(file, 'utf8'));

  it("test mode's page closes a test case in two calls", { timeout: 60_000 }, async () => {
    const [block] = blocksOf('docs/integrators/test-mode.md');
    expect(block).toContain('/simulate/');
    const run = await newcomerBash(`set -e\n${block}\nprintf '\\nCASE=%s\\n' "$CASE"`, {
      VOUCH_URL: app.baseUrl,
      VOUCH_TEST_KEY: testKey,
    });
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    const caseId = /\nCASE=(\S+)\n$/.exec(run.stdout)?.[1] ?? '';
    const read = await apiClient(app.baseUrl, testKey).get<{ status: string }>(`/v1/cases/${caseId}/`);
    expect(read.body.status).toBe('closed');
  });

  it("the command-line page's help lines answer with the usage they promise", {
    timeout: 60_000,
  }, async () => {
    const [block] = blocksOf('docs/operators/command-line.md');
    const lines = (block ?? '').split('\n').filter((line) => line.includes('--help'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      const run = await newcomerBash(line.replace(/\s+#.*$/, ''));
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
      expect(run.stdout, line).toMatch(/^usage: npm run --silent cli -- /);
    }
  });
});

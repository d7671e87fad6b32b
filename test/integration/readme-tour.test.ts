import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { markdownSection, newcomerBash, shellBlocks } from '@/test/support/newcomer-shell';

/**
 * The README's five-minute tour runs as written: its shell blocks, copied in order into one shell
 * (all but the one that starts the service, which this test has started), create a team with the
 * operator's command, open a live case, start the example receiver and `listen` in the
 * background, and close a test case whose `case.closed` the receiver verifies; then the two are
 * stopped as the README says (`kill %1 %2`, each job's process group). Only the service's address
 * and the receiver's port differ from the README's.
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
  it('runs as written, block after block: a team, a live case, a closed test case its receiver verified', {
    timeout: 90_000,
  }, async () => {
    const blocks = shellBlocks(tour());
    const runnable = blocks.filter((block) => !/^npm start\b/m.test(block));
    expect(blocks.length - runnable.length).toBe(1);
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    const script = runnable.join('\n');
    expect(script).toContain('export VOUCH_URL=http://localhost:3000\n');
    expect(script).toMatch(/example:receiver -- 4000 &\n/);
    expect(script).toMatch(/listen -- --forward-to http:\/\/localhost:4000\/hook &\n/);
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'vouch-tour-'));
    const out = path.join(dir, 'out.log');
    try {
      // Job control on, as in the reader's interactive shell: each background job is its own
      // process group, which `kill %1 %2` stops whole (npm, its shell and the node process).
      const run = await newcomerBash(
        [
          'set -em',
          `exec > >(tee ${out})`,
          // As the reader does, the next block waits for `listen` to say it is ready.
          runnable
            .map((block) => (/\blisten\b/.test(block) ? `${block}${untilPrinted('^Ready', out)}\n` : block))
            .join('\n')
            .replace('http://localhost:3000', app.baseUrl)
            .replaceAll('4000', String(port)),
          `printf '\\nCASE=%s\\n' "$CASE"`,
          untilPrinted('^verified case.closed', out),
          'kill %1 %2',
          // The two jobs only: a bare `wait` would wait for the tee above too, which waits for this shell.
          'wait %1 %2 || true',
        ].join('\n'),
        { DATABASE_URL: database.url },
      );
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      // The team's keys, the ping, the live case opened, listed and counted, the test case closed.
      expect(run.stdout).toMatch(/"api_key":"vouch_live_/);
      expect(run.stdout).toContain('"subject_email":"jane@acme.example"');
      expect(run.stdout).toMatch(/"status":"closed"/);
      const caseId = /\nCASE=(\S+)\n/.exec(run.stdout)?.[1];
      const [row] = await database.sql<{ status: string; livemode: boolean }[]>`
        select status, livemode from cases where id = ${caseId ?? ''}`;
      expect(row).toEqual({ status: 'closed', livemode: false });
      const [live] = await database.sql<{ subject_email: string }[]>`
        select subject_email from cases where livemode order by created_at`;
      expect(live?.subject_email).toBe('jane@acme.example');
      // The receiver checked the forwarded case.closed's signature with the shared secret.
      expect(run.stdout).toContain(`verified case.closed`);
      expect(run.stdout).toContain(`case ${caseId} (closed)`);
      expect(run.stdout).not.toContain('refused a delivery');
      // Stopped as the README says: nothing listens on the receiver's port any more.
      expect(await accepts(port)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A shell loop that waits (30 s at most) until `file` holds a line matching `pattern`. */
function untilPrinted(pattern: string, file: string): string {
  return `for i in $(seq 1 150); do grep -q '${pattern}' ${file} && break; sleep 0.2; done`;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

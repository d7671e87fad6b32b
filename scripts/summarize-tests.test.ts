import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/** The run's summary (scripts/summarize-tests.mjs) over reports written here, as a stage would. */
const script = path.resolve('scripts/summarize-tests.mjs');
let dir: string;

const expectations = {
  stages: { 'vitest.json': ['unit', 'integration'], 'playwright.json': ['e2e'] },
  files: { 'test/integration/a.test.ts': 2, 'e2e/a.spec.ts': 1, 'e2e/console/console.spec.ts': 0 },
  playwright_skips_by_design: [
    { file: 'console/console.spec.ts', project: 'phone', reason: 'desktop only', count: 2 },
  ],
};

function summarize(reports: Record<string, unknown>, env: Record<string, string> = {}) {
  dir = mkdtempSync(path.join(tmpdir(), 'summary-'));
  writeFileSync(path.join(dir, 'expectations.json'), JSON.stringify(expectations));
  for (const [name, report] of Object.entries(reports)) {
    writeFileSync(path.join(dir, name), JSON.stringify(report));
  }
  const stages = Object.keys(reports).map((name) => `${name}=${name.replace('.json', '')}`);
  try {
    const out = execFileSync(process.execPath, [script, dir, ...stages], {
      env: { ...process.env, CI: '', ...env, TEST_EXPECTATIONS: path.join(dir, 'expectations.json') },
      encoding: 'utf8',
    });
    return { code: 0, out };
  } catch (error) {
    const failed = error as { status: number; stdout: string };
    return { code: failed.status, out: failed.stdout };
  }
}

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const vitestFile = (status: string, tests: string[], message = '', file = 'test/integration/a.test.ts') => ({
  name: `${process.cwd()}/${file}`,
  status,
  message,
  assertionResults: tests.map((t, i) => ({ status: t, fullName: `test ${i}` })),
});
const vitest = (...files: unknown[]) => ({ numPassedTests: 0, testResults: files });

const pwTest = (file: string, project: string, status: string, reason?: string) => ({
  title: `${project} ${status}`,
  file,
  tests: [
    {
      projectName: project,
      status,
      annotations: reason === undefined ? [] : [{ type: 'skip', description: reason }],
    },
  ],
});
const playwright = (...specs: unknown[]) => ({ suites: [{ title: '', specs }], errors: [] });
const designedSkips = [
  pwTest('console/console.spec.ts', 'phone', 'skipped', 'desktop only'),
  pwTest('console/console.spec.ts', 'phone', 'skipped', 'desktop only'),
];

describe('the run summary', () => {
  it('passes a run at its manifest’s counts with exactly the skips by design', () => {
    const { code, out } = summarize({
      'vitest.json': vitest(vitestFile('passed', ['passed', 'passed'])),
      'playwright.json': playwright(pwTest('a.spec.ts', 'desktop', 'expected'), ...designedSkips),
    });
    expect(out).toContain('vitest: 2 passed, 0 failed, 0 skipped');
    expect(out).toContain('playwright: 1 passed, 0 failed, 0 skipped, 2 not run by design');
    expect(code).toBe(0);
  });

  it('names a file that failed outside its tests, though every test in it passed', () => {
    const { code, out } = summarize({
      'vitest.json': vitest(
        vitestFile('failed', ['passed', 'passed'], 'afterAll: 1 answer broke the contract\nmore'),
      ),
      'playwright.json': playwright(pwTest('a.spec.ts', 'desktop', 'expected'), ...designedSkips),
    });
    expect(out).toContain(
      'failed: test/integration/a.test.ts (the file failed: afterAll: 1 answer broke the contract)',
    );
    expect(code).toBe(1);
  });

  it('prints the first lines of each failure’s reason under its name, without colour codes', () => {
    const file = vitestFile('failed', ['passed']);
    file.assertionResults.push({
      status: 'failed',
      fullName: 'test 1',
      failureMessages: ['\u001b[31mAssertionError: expected 401 to be 200\u001b[39m\n\n    at a.test.ts:9:3'],
    } as never);
    const pwFailed = pwTest('b.spec.ts', 'desktop', 'unexpected');
    (pwFailed.tests[0] as Record<string, unknown>).results = [{ error: { message: 'Timed out 10000ms' } }];
    const { code, out } = summarize({
      'vitest.json': vitest(file),
      'playwright.json': playwright(pwFailed, ...designedSkips),
    });
    expect(out).toContain(
      'failed: test/integration/a.test.ts > test 1\n      AssertionError: expected 401 to be 200\n      at a.test.ts:9:3',
    );
    expect(out).toContain('failed: [desktop] desktop unexpected\n      Timed out 10000ms');
    expect(code).toBe(1);
  });

  it('fails a file that passes fewer tests than the manifest lists, though another file gained as many', () => {
    const { code, out } = summarize({
      'vitest.json': vitest(
        vitestFile('passed', ['passed']),
        vitestFile('passed', ['passed', 'passed', 'passed'], '', 'server/b.test.ts'),
      ),
      'playwright.json': playwright(pwTest('a.spec.ts', 'desktop', 'expected'), ...designedSkips),
    });
    expect(out).toContain(
      'test/integration/a.test.ts: 1 passed, the manifest lists 2 (scripts/test-expectations.json): tests left the run',
    );
    expect(code).toBe(1);
  });

  it('fails a file of the stage’s projects missing from its report, and a file missing from the manifest', () => {
    const { code, out } = summarize({
      'vitest.json': vitest(vitestFile('passed', ['passed', 'passed'], '', 'server/new.test.ts')),
      'playwright.json': playwright(pwTest('a.spec.ts', 'desktop', 'expected'), ...designedSkips),
    });
    expect(out).toContain('test/integration/a.test.ts: 0 passed, the manifest lists 2');
    expect(out).toContain(
      'server/new.test.ts: not in the manifest (npm run test:manifest after a run, and commit it)',
    );
    expect(code).toBe(1);
  });

  it('fails a stage whose projects are not listed, and a stage whose report is missing', () => {
    const { code, out } = summarize({ 'other.json': vitest(vitestFile('passed', ['passed', 'passed'])) });
    expect(out).toContain('no projects listed for other.json');
    expect(code).toBe(1);
  });

  it('writes the manifest from a run’s reports: each file’s passing tests, the most any stage saw', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'summary-'));
    const target = path.join(dir, 'expectations.json');
    writeFileSync(target, JSON.stringify(expectations));
    writeFileSync(
      path.join(dir, '1.json'),
      JSON.stringify(
        vitest(vitestFile('passed', ['passed', 'passed', 'failed'], '', 'test/domain/d.test.ts')),
      ),
    );
    writeFileSync(
      path.join(dir, '2.json'),
      JSON.stringify(
        vitest(vitestFile('passed', ['passed', 'passed', 'passed'], '', 'test/domain/d.test.ts')),
      ),
    );
    writeFileSync(
      path.join(dir, 'p.json'),
      JSON.stringify(playwright(pwTest('a.spec.ts', 'desktop', 'expected'))),
    );
    execFileSync(process.execPath, [script, '--write-manifest', dir], {
      env: { ...process.env, TEST_EXPECTATIONS: target },
      encoding: 'utf8',
    });
    const written = JSON.parse(readFileSync(target, 'utf8')) as typeof expectations;
    expect(written.files).toEqual({ 'e2e/a.spec.ts': 1, 'test/domain/d.test.ts': 3 });
    expect(written.stages).toEqual(expectations.stages);
  });

  it('counts as a skip any Playwright skip not listed by design, whatever reason it gives', () => {
    const { code, out } = summarize(
      {
        'vitest.json': vitest(vitestFile('passed', ['passed', 'passed'])),
        'playwright.json': playwright(
          pwTest('a.spec.ts', 'desktop', 'expected'),
          ...designedSkips,
          pwTest('verify.spec.ts', 'phone', 'skipped', 'flaky on phones, will fix'),
        ),
      },
      { CI: '1' },
    );
    expect(out).toContain('playwright: 1 passed, 0 failed, 1 skipped, 2 not run by design');
    expect(out).toContain('(skipped: flaky on phones, will fix; not a skip by design)');
    expect(code).toBe(1);
  });

  it('fails when the skips by design are more (or fewer) than listed', () => {
    const { code, out } = summarize({
      'vitest.json': vitest(vitestFile('passed', ['passed', 'passed'])),
      'playwright.json': playwright(
        pwTest('a.spec.ts', 'desktop', 'expected'),
        ...designedSkips,
        designedSkips[0],
      ),
    });
    expect(out).toContain('3 skipped by design, test-expectations.json lists 2');
    expect(code).toBe(1);
  });
});

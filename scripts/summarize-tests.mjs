// The closing lines of `npm test`: one line per test stage (each run counted once, under its own
// name), the name of every failed test and of every file that failed outside its tests (a failing
// `afterAll`, where the contract check reports), and a failure for a stage whose report is missing.
// The suite cannot shrink without saying so:
// - under CI a skipped test fails the run (a committed `.skip` or `.todo`); the only skips allowed
//   are the ones scripts/test-expectations.json lists by design, by file, project and exact count;
// - a stage that passes fewer tests than its floor in scripts/test-expectations.json fails (a file
//   renamed out of the suite's pattern, a describe block dropped): raise the floor as tests are added.
//
// Usage: node scripts/summarize-tests.mjs DIR FILE=STAGE-NAME [FILE=STAGE-NAME ...]
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

const [dir, ...stages] = process.argv.slice(2);
// TEST_EXPECTATIONS points the summary's own tests at expectations of their own.
const expectations = JSON.parse(
  readFileSync(
    process.env.TEST_EXPECTATIONS ?? fileURLToPath(new URL('./test-expectations.json', import.meta.url)),
    'utf8',
  ),
);

/**
 * The first lines of a failure's message, indented under its name: CI shows only the end of the
 * run's output, so the summary is where a failure's reason must be read.
 */
function why(message) {
  if (!message) return '';
  const lines = stripVTControlCharacters(message)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 6);
  return lines.map((line) => `\n      ${line.trim().slice(0, 240)}`).join('');
}

/** vitest's JSON report: every assertion result of every file. */
function fromVitest(report) {
  const tally = { passed: 0, failed: 0, skipped: 0, intentional: 0, failures: [] };
  for (const file of report.testResults ?? []) {
    const results = file.assertionResults ?? [];
    for (const test of results) {
      if (test.status === 'passed') tally.passed += 1;
      else if (test.status === 'failed') {
        tally.failed += 1;
        tally.failures.push(
          `${path.relative(process.cwd(), file.name)} > ${test.fullName}${why(test.failureMessages?.[0])}`,
        );
      } else tally.skipped += 1;
    }
    // A file can fail outside its tests: it did not load, or a hook (`beforeAll`, `afterAll`,
    // where the contract check reports what it saw) threw. Its tests may all have passed.
    if (file.status === 'failed' && !results.some((test) => test.status === 'failed')) {
      tally.failed += 1;
      const message = (file.message ?? '').split('\n')[0].slice(0, 300);
      tally.failures.push(`${path.relative(process.cwd(), file.name)} (the file failed: ${message})`);
    }
  }
  return tally;
}

/**
 * Playwright's JSON report. A skip is intentional only where test-expectations.json says so: its
 * file, its project and the reason it gives, and then only as many as it lists (a new test in
 * that file is one more to explain); any other skip is a skip.
 */
function fromPlaywright(report) {
  const tally = { passed: 0, failed: 0, skipped: 0, intentional: 0, failures: [] };
  const byDesign = (expectations.playwright_skips_by_design ?? []).map((rule) => ({ ...rule, seen: [] }));
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        const name = `[${test.projectName}] ${[...titles, spec.title].join(' › ')}`;
        if (test.status === 'expected' || test.status === 'flaky') tally.passed += 1;
        else if (test.status === 'skipped') {
          const reason = (test.annotations ?? []).find((a) => a.type === 'skip')?.description;
          const rule = byDesign.find(
            (r) => r.file === spec.file && r.project === test.projectName && r.reason === reason,
          );
          if (rule) rule.seen.push(name);
          else {
            tally.skipped += 1;
            tally.failures.push(`${name} (skipped${reason ? `: ${reason}` : ''}; not a skip by design)`);
          }
        } else {
          tally.failed += 1;
          const error = test.results?.at(-1)?.error?.message;
          tally.failures.push(`${name}${why(error)}`);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, suite.title ? [...titles, suite.title] : titles);
  };
  for (const suite of report.suites ?? []) walk(suite, []);
  for (const rule of byDesign) {
    tally.intentional += rule.seen.length;
    if (rule.seen.length !== rule.count) {
      tally.failed += 1;
      tally.failures.push(
        `${rule.file} [${rule.project}]: ${rule.seen.length} skipped by design, test-expectations.json lists ${rule.count}`,
      );
    }
  }
  for (const error of report.errors ?? []) {
    tally.failed += 1;
    tally.failures.push(`(run error) ${error.message ?? JSON.stringify(error)}`.slice(0, 300));
  }
  return tally;
}

let ok = true;
console.log('== summary');
for (const entry of stages) {
  const [file, name] = entry.split(/=(.*)/s);
  const reportPath = path.join(dir, file);
  if (!existsSync(reportPath)) {
    console.log(`${name}: NO REPORT (${reportPath} is missing: the stage did not run to the end)`);
    ok = false;
    continue;
  }
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const tally = 'numPassedTests' in report ? fromVitest(report) : fromPlaywright(report);
  const extra = tally.intentional ? `, ${tally.intentional} not run by design` : '';
  console.log(`${name}: ${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped${extra}`);
  for (const failure of tally.failures) console.log(`  failed: ${failure}`);
  if (tally.failed > 0 || tally.passed === 0) ok = false;
  const floor = expectations.floors?.[file];
  if (floor === undefined) {
    console.log(`  no floor for ${file} in scripts/test-expectations.json`);
    ok = false;
  } else if (tally.passed < floor) {
    console.log(
      `  ${tally.passed} passed, below this stage's floor of ${floor} (scripts/test-expectations.json): tests left the run`,
    );
    ok = false;
  }
  if (tally.skipped > 0 && process.env.CI) {
    console.log(`  ${tally.skipped} skipped without a reason: under CI every test runs`);
    ok = false;
  }
}
process.exit(ok ? 0 : 1);

// The closing lines of `npm test`: one line per test stage (each run counted once, under its own
// name), the name of every failed test, and a failure for a stage whose report is missing. Under
// CI a skipped test fails the run too (a committed `.skip` or `.todo` would shrink it silently);
// a Playwright skip that gives its reason is counted apart, as not run by design.
//
// Usage: node scripts/summarize-tests.mjs DIR FILE=STAGE-NAME [FILE=STAGE-NAME ...]
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [dir, ...stages] = process.argv.slice(2);

/** vitest's JSON report: every assertion result of every file. */
function fromVitest(report) {
  const tally = { passed: 0, failed: 0, skipped: 0, intentional: 0, failures: [] };
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === 'passed') tally.passed += 1;
      else if (test.status === 'failed') {
        tally.failed += 1;
        tally.failures.push(`${path.relative(process.cwd(), file.name)} > ${test.fullName}`);
      } else tally.skipped += 1;
    }
    // A file that failed to load has no assertion results, only its own failure.
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) {
      tally.failed += 1;
      tally.failures.push(
        `${path.relative(process.cwd(), file.name)} (the file failed: ${file.message ?? ''})`,
      );
    }
  }
  return tally;
}

/**
 * Playwright's JSON report. A test skipped by a `test.skip(condition, reason)` with a reason (the
 * console flow is desktop-only) is intentional and counted apart; any other skip is a skip.
 */
function fromPlaywright(report) {
  const tally = { passed: 0, failed: 0, skipped: 0, intentional: 0, failures: [] };
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        const name = `[${test.projectName}] ${[...titles, spec.title].join(' › ')}`;
        if (test.status === 'expected' || test.status === 'flaky') tally.passed += 1;
        else if (test.status === 'skipped') {
          const reasoned = (test.annotations ?? []).some((a) => a.type === 'skip' && a.description);
          if (reasoned) tally.intentional += 1;
          else tally.skipped += 1;
        } else {
          tally.failed += 1;
          tally.failures.push(name);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, suite.title ? [...titles, suite.title] : titles);
  };
  for (const suite of report.suites ?? []) walk(suite, []);
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
  if (tally.skipped > 0 && process.env.CI) {
    console.log(`  ${tally.skipped} skipped without a reason: under CI every test runs`);
    ok = false;
  }
}
process.exit(ok ? 0 : 1);

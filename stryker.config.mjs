// @ts-check
/**
 * `npm run test:mutation`: StrykerJS over the security-critical code, each mutant run against the
 * unit and domain tests that cover it (vitest.mutation.config.ts). Incremental: the last run's
 * results (test/mutation/incremental.json, committed) are reused for code and tests unchanged
 * since, so a rerun costs only what changed. `npm run --silent test:mutation:scores` prints the
 * score per folder from the last report (reports/mutation/mutation.json); the target is 80 %.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: [
    'server/oidc/**/*.ts',
    'server/application/oidc/**/*.ts',
    'server/audit/**/*.ts',
    'server/evidence/**/*.ts',
    'server/signing/**/*.ts',
    'server/auth/**/*.ts',
    'server/webhooks/signature.ts',
    'server/rate-limits/**/*.ts',
    '!**/*.test.ts',
  ],
  // Not copied into the sandboxes: data directories (a live server's socket among them), builds, reports.
  ignorePatterns: [
    '.data',
    '.test-data',
    '.bench-data',
    '.next*',
    'dist',
    '.test-results',
    'test-results',
    'playwright-report',
    'bench/results',
    'reports',
  ],
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'test/mutation/incremental.json',
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};

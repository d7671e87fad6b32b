import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const alias = { '@': fileURLToPath(new URL('.', import.meta.url)) };

/** The suite's projects, by name (vitest.mutation.config.ts takes two of them). */
export const projects = {
  unit: {
    resolve: { alias },
    test: {
      name: 'unit',
      include: [
        'server/**/*.test.ts',
        'scripts/**/*.test.ts',
        'deploy/**/*.test.ts',
        'processes/**/*.test.ts',
        'cli/**/*.test.ts',
        'db/**/*.test.ts',
      ],
      environment: 'node',
    },
  },
  domain: {
    resolve: { alias },
    test: {
      // Business rules in-process: use cases and domain functions called directly against a
      // real PostgreSQL (a database per file, copied from the migrated template), no app.
      name: 'domain',
      include: ['test/domain/**/*.test.ts'],
      environment: 'node',
      globalSetup: ['test/setup/global-setup.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // The files share their workers' modules (each builds its own dependencies and
      // database, and none changes module state): importing the server's modules once per
      // worker instead of once per file took 38 % of this project's time.
      isolate: false,
      maxWorkers: 2,
    },
  },
  integration: {
    resolve: { alias },
    test: {
      name: 'integration',
      include: ['test/integration/**/*.test.ts'],
      environment: 'node',
      globalSetup: ['test/setup/global-setup.ts'],
      setupFiles: ['test/setup/openapi-conformance.ts'],
      testTimeout: 60_000,
      hookTimeout: 90_000,
      // Each file starts its own app process; two at a time suits a 2-core machine.
      maxWorkers: 2,
      // The files share their worker's modules, as the domain project's do: each starts its
      // own apps and databases, and the contract check patches fetch once per worker
      // (test/setup/openapi-conformance.ts). Importing the helpers and the server's modules
      // once per worker rather than once per file took 12 % of this project's time.
      isolate: false,
    },
  },
} satisfies Record<string, TestProjectInlineConfiguration>;

/**
 * The service behind PgBouncer in transaction pooling: set up as the integration project is
 * (scripts/test-all.sh runs it beside the core flows' integration files, VOUCH_TEST_POOLER routing
 * their apps through a PgBouncer).
 */
const pooler = {
  resolve: { alias },
  test: { ...projects.integration.test, name: 'pooler', include: ['test/pooler/**/*.test.ts'] },
} satisfies TestProjectInlineConfiguration;

/**
 * The container image run as an orchestrator runs it (scripts/test-all.sh builds it first, with
 * scripts/build-image.sh, where buildah and mmdebstrap are installed): set up as the integration
 * project is.
 */
const image = {
  resolve: { alias },
  test: { ...projects.integration.test, name: 'image', include: ['test/image/**/*.test.ts'] },
} satisfies TestProjectInlineConfiguration;

export const resolveAlias = { alias };

export default defineConfig({
  resolve: { alias },
  test: { projects: [projects.unit, projects.domain, projects.integration, pooler, image] },
});

import { defineConfig } from 'vitest/config';
import { projects, resolveAlias } from './vitest.config';

/**
 * What `npm run test:mutation` (StrykerJS) runs against each mutant: the unit and domain projects,
 * the tests that call the code in-process. The integration project drives built processes over
 * HTTP, which never load a mutant.
 */
export default defineConfig({
  resolve: resolveAlias,
  test: {
    projects: [
      projects.unit,
      // Each file imports the modules afresh (the suite's domain project shares them across files
      // for speed): a static mutant, one in code that runs as a module loads (a constant, a
      // regular expression), is only ever active in modules loaded while it is.
      { ...projects.domain, test: { ...projects.domain.test, isolate: true } },
    ],
  },
});

// tRPC's object spreads as the language's own, in the processes' bundles (scripts/build-processes.mjs).
import { readFile } from 'node:fs/promises';

/**
 * How @trpc/server 11's build spells `{ ...a, ...b }`: a helper (oxc's `objectSpread2`) that copies
 * one property at a time through `Object.defineProperty`. Its procedure caller copies its options
 * twice at every middleware layer this way, and on a `/v1` request that was 5 % of a web process's
 * CPU for a get and 8 % for a creation (`npx tsx bench/ab.ts get|post`, with and without).
 */
export const SPREAD_HELPER = 'function _objectSpread2(e) {';

/**
 * The helper as the spread it stands for: each argument's own enumerable properties (strings and
 * symbols, a `__proto__` key as a property like any other) copied onto a new object, null and
 * undefined skipped. Every call in @trpc/server starts from a new object and uses what it returns.
 */
const NATIVE_SPREAD_HELPER = `function _objectSpread2(e, a, b, ...rest) {
\tlet copy = { ...e, ...a, ...b };
\tfor (const more of rest) copy = { ...copy, ...more };
\treturn copy;
}
function _objectSpread2AsShipped(e) {`;

/** `source` with its spread helper replaced, or null when it has none. */
export function withNativeSpread(source) {
  if (!source.includes(SPREAD_HELPER)) return null;
  return source.replace(SPREAD_HELPER, NATIVE_SPREAD_HELPER);
}

/**
 * The esbuild plugin: @trpc/server's files get the native helper as they are bundled. `required`
 * fails the build when none had the helper (an upgrade that spells it otherwise), so the speed-up
 * is never lost unnoticed.
 */
export function trpcNativeSpread({ required }) {
  return {
    name: 'trpc-native-spread',
    setup(build) {
      let replaced = 0;
      build.onStart(() => {
        replaced = 0;
      });
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]@trpc[\\/]server[\\/]dist[\\/].*\.mjs$/ },
        async (args) => {
          const contents = withNativeSpread(await readFile(args.path, 'utf8'));
          if (contents === null) return undefined;
          replaced += 1;
          return { contents, loader: 'js' };
        },
      );
      build.onEnd((result) => {
        if (required && replaced === 0 && result.errors.length === 0) {
          return {
            errors: [
              {
                text: `no @trpc/server file had "${SPREAD_HELPER}": see scripts/trpc-native-spread.mjs`,
              },
            ],
          };
        }
        return undefined;
      });
    },
  };
}

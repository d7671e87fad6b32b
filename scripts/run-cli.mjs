// `npm run cli` and `npm run listen`: the built command (dist/cli/<entry>.mjs, made by
// scripts/build-processes.mjs), built first when it is missing or older than any file it was
// built from, so a checkout that changed since the last build never runs stale code and nothing
// is transpiled at run time.
//
// Usage: node scripts/run-cli.mjs index|listen [arguments…]
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const built = path.join(root, 'dist', 'cli');
const [entry = 'index', ...args] = process.argv.slice(2);
if (!['index', 'listen'].includes(entry)) {
  process.stderr.write(`usage: node scripts/run-cli.mjs index|listen [arguments…]\n`);
  process.exit(2);
}

function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** Whether the build is there and no source it read has changed since. */
function buildIsCurrent() {
  const listed = mtime(path.join(built, 'inputs.json'));
  if (listed === null || mtime(path.join(built, `${entry}.mjs`)) === null) return false;
  const inputs = JSON.parse(readFileSync(path.join(built, 'inputs.json'), 'utf8'));
  return inputs.every((input) => {
    const changed = mtime(path.join(root, input));
    return changed !== null && changed <= listed;
  });
}

/**
 * Builds under a lock file, so that commands started together after a change (a provisioning
 * script's four at a time) build once, and none runs a build another is replacing.
 */
async function buildOnce() {
  const lock = path.join(root, 'dist', 'cli.lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock older than a minute is a build that died: take it over.
      if (Date.now() - (mtime(lock) ?? Date.now()) > 60_000) rmSync(lock, { force: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (buildIsCurrent()) return;
    const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-processes.mjs'), '--cli'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (result.status !== 0) process.exit(result.status ?? 1);
  } finally {
    rmSync(lock, { force: true });
  }
}

if (!buildIsCurrent()) await buildOnce();

process.setSourceMapsEnabled(true);
// The command reads its arguments as if it had been started itself.
process.argv = [process.argv[0], path.join(built, `${entry}.mjs`), ...args];
await import(pathToFileURL(path.join(built, `${entry}.mjs`)).href);

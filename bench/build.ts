import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildProcesses } from '@/test/support/app';

/** What a build is made from: a build older than any of it is stale. */
const SOURCES = ['app', 'server', 'db', 'processes', 'next.config.mjs', 'package-lock.json'];

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newestMtime(path.join(entry, name))), 0);
}

/**
 * Builds the app into `distDir` unless a build there is newer than every source, so a benchmark
 * never measures yesterday's code. Says which it did.
 */
export async function buildIfNeeded(distDir: string): Promise<string> {
  // The processes' own build takes half a second: always fresh.
  buildProcesses();
  const buildId = path.join(distDir, 'BUILD_ID');
  if (existsSync(buildId) && Math.max(...SOURCES.map(newestMtime)) < statSync(buildId).mtimeMs) {
    return 'up to date';
  }
  const started = performance.now();
  const child = spawn(process.execPath, [path.resolve('node_modules/next/dist/bin/next'), 'build'], {
    env: { ...process.env, NEXT_DIST_DIR: distDir, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => {
    output += c;
  });
  child.stderr?.on('data', (c) => {
    output += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`next build failed (${code}):\n${output}`);
  return `built in ${((performance.now() - started) / 1000).toFixed(0)} s`;
}

import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * A fresh clone stays as committed through what a newcomer and CI run: `npm install`, builds in
 * any build directory (tests and benchmarks use their own), and the check CI makes after each step.
 */
const root = process.cwd();
const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function scratch(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'vouch-checkout-'));
  folders.push(folder);
  return folder;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  });
}

/** This tree's files as a clone of it would have them (tracked, and new ones not ignored), committed. */
function cloneOfThisTree(): string {
  const folder = scratch();
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    try {
      copyFileSync(path.join(root, file), path.join(folder, file));
    } catch {
      // A tracked file deleted in this tree is not part of it.
    }
  }
  git(folder, 'init', '-q');
  git(folder, 'add', '-A');
  git(folder, 'commit', '-qm', 'clone');
  symlinkSync(path.join(root, 'node_modules'), path.join(folder, 'node_modules'));
  return folder;
}

describe('a clean clone stays clean', () => {
  it('npm install leaves the committed lockfile byte for byte as it is', { timeout: 120_000 }, () => {
    // The lockfile npm computes from package.json and the committed lockfile, without installing:
    // what `npm install` on a fresh clone writes (the whole install takes minutes).
    const folder = scratch();
    for (const file of ['package.json', 'package-lock.json']) {
      copyFileSync(path.join(root, file), path.join(folder, file));
    }
    const install = spawnSync(
      'npm',
      ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: folder, encoding: 'utf8' },
    );
    expect(install.status, install.stderr).toBe(0);
    const committed = readFileSync(path.join(root, 'package-lock.json'), 'utf8');
    const written = readFileSync(path.join(folder, 'package-lock.json'), 'utf8');
    expect(written === committed, 'npm install rewrote package-lock.json').toBe(true);
  });

  it('a build in any build directory leaves every tracked file as committed', { timeout: 120_000 }, () => {
    const clone = cloneOfThisTree();
    // `next typegen` runs the TypeScript set-up `next build` runs (tsconfig.json, next-env.d.ts)
    // without the build's minutes; the default directory, then a benchmark's.
    for (const distDir of ['.next', '.next-bench-webhooks']) {
      const typegen = spawnSync(path.join(root, 'node_modules', '.bin', 'next'), ['typegen'], {
        cwd: clone,
        env: { ...process.env, NEXT_DIST_DIR: distDir, NEXT_TELEMETRY_DISABLED: '1' },
        encoding: 'utf8',
      });
      expect(typegen.status, typegen.stdout + typegen.stderr).toBe(0);
      expect(git(clone, 'status', '--porcelain', '--untracked-files=no'), distDir).toBe('');
    }
  });

  it("CI's check after each step fails naming the tracked files a step changed", () => {
    const folder = scratch();
    git(folder, 'init', '-q');
    writeFileSync(path.join(folder, 'tsconfig.json'), '{}\n');
    writeFileSync(path.join(folder, 'kept.txt'), 'kept\n');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-qm', 'base');
    const check = () =>
      spawnSync('bash', [path.join(root, 'scripts', 'tracked-files-unchanged.sh'), 'the build'], {
        cwd: folder,
        encoding: 'utf8',
      });

    writeFileSync(path.join(folder, 'untracked.log'), 'ignored by the check\n');
    expect(check().status).toBe(0);

    writeFileSync(path.join(folder, 'tsconfig.json'), '{"include": []}\n');
    const failed = check();
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('the build changed tracked files');
    expect(failed.stderr).toContain('tsconfig.json');
    expect(failed.stderr).not.toContain('kept.txt');
  });
});

/**
 * Issue 23, finding 1: any local user became superuser of the embedded PostgreSQL (user and
 * password `postgres`, password login over TCP on 127.0.0.1 and over a socket in /tmp that anyone
 * may use), and could run programs as its OS user through `COPY … TO PROGRAM`. Now each data
 * directory has its own random password (a file only the service's OS user may read), every
 * connection must give it, the socket is in the data directory, which only the server's OS user
 * may enter, and the service's server opens no TCP port. A data directory made the old way is
 * converted at the next start, its data kept.
 *
 * The attacks run as the OS user `nobody` (`runuser`, so as root, as CI and these machines run).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { embeddedDatabaseUrl, passwordFileOf } from '@/db/embedded';
import { freePort, type RunningApp, startApp } from '@/test/support/app';

const asRoot = process.getuid?.() === 0;

let folder: string;
let dataDir: string;
let pgPort: number;
let app: RunningApp;
const NOTE = 'written before the conversion';

/** Runs a command as the OS user `nobody`; its exit status and what it printed. */
function asNobody(command: string[]): { status: number | null; output: string } {
  const result = spawnSync('runuser', ['-u', 'nobody', '--', ...command], {
    encoding: 'utf8',
    cwd: '/',
    env: { ...process.env, HOME: '/nonexistent', PGCONNECT_TIMEOUT: '5' },
    timeout: 30_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function tcpPortAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  mkdirSync('.test-data', { recursive: true });
  folder = mkdtempSync(path.resolve('.test-data', 'embedded-access-'));
  // PostgreSQL runs as the OS user `postgres` when the tests run as root: it must reach its folder.
  chmodSync(folder, 0o755);
  dataDir = path.join(folder, 'postgres');
  pgPort = await freePort();
  // A data directory as the code before issue 23 made it, with one row in it.
  const made = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/old-embedded-postgres.ts', dataDir, String(pgPort), NOTE],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  expect(await new Promise((resolve) => made.once('exit', resolve))).toBe(0);
  // Then the service started on it with no DATABASE_URL (`npm run serve`: the launcher starts its
  // database the same way, test/integration/launcher.test.ts, but takes longer to be up).
  app = await startApp({
    databaseUrl: '',
    env: { EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) },
  });
}, 180_000);

afterAll(async () => {
  await app?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('a data directory made with the old password', () => {
  it('is converted at the next start: its data kept, a password of its own, no other way in', async () => {
    const database = connectDatabase(embeddedDatabaseUrl(dataDir, pgPort, 'vouch'), { max: 1 });
    try {
      expect(await database.sql`select note from legacy_rows`).toEqual([{ note: NOTE }]);
      // The service's own tables are there too: it migrated the converted database and serves.
      expect((await database.sql`select count(*)::int as n from plans`)[0]?.n).toBeGreaterThan(0);
    } finally {
      await database.close();
    }
    expect((await fetch(`${app.baseUrl}/v1/ping`)).status).toBe(200);

    const password = readFileSync(passwordFileOf(dataDir), 'utf8').trim();
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    // The old password no longer opens it, even from a user who may enter the socket's folder.
    const old = postgres({
      host: dataDir,
      port: pgPort,
      user: 'postgres',
      password: 'postgres',
      database: 'vouch',
    });
    await expect(old`select 1`).rejects.toMatchObject({ code: '28P01' });
    await old.end();

    const rules = readFileSync(path.join(dataDir, 'pg_hba.conf'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(rules).toEqual(['local all all scram-sha-256']);
  });
});

describe.skipIf(!asRoot)('another OS user (nobody; needs root to switch users)', () => {
  it('finds no TCP port: postgres:postgres over 127.0.0.1 is refused', async () => {
    const attempt = asNobody([
      'psql',
      '-X',
      '-w',
      `postgresql://postgres:postgres@127.0.0.1:${pgPort}/vouch`,
      '-c',
      'select 1',
    ]);
    expect(attempt.status, attempt.output).not.toBe(0);
    expect(attempt.output).toMatch(/Connection refused/);
    expect(await tcpPortAnswers(pgPort)).toBe(false);
  });

  it('cannot reach the socket, in the data directory or in /tmp, even with the real password', () => {
    const password = readFileSync(passwordFileOf(dataDir), 'utf8').trim();
    for (const [directory, why] of [
      [dataDir, /Permission denied/],
      [os.tmpdir(), /No such file or directory/],
    ] as const) {
      const attempt = asNobody([
        'psql',
        '-X',
        '-w',
        `host=${directory} port=${pgPort} user=postgres dbname=vouch password=${password}`,
        '-c',
        'select 1',
      ]);
      expect(attempt.status, attempt.output).not.toBe(0);
      expect(attempt.output).toMatch(why);
    }
    // The data directory is the server's user's alone.
    expect(statSync(dataDir).mode & 0o077).toBe(0);
  });

  it('cannot read the password file', () => {
    const file = passwordFileOf(dataDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(file).uid).toBe(process.getuid?.());
    const attempt = asNobody(['cat', file]);
    expect(attempt.status).not.toBe(0);
    expect(attempt.output).toMatch(/Permission denied/);
  });
});

/**
 * Issue 23, finding 6: `VOUCH_ENV=production` started with settings that are safe only in
 * development (webhooks allowed into the private network, a vendor's API over plain http, the
 * embedded database), and an unreachable DATABASE_URL stopped the service with a stack trace.
 * Each refusal must be one log line naming the setting, from every process entry.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentSigningKey, keyEncryptionKey } from '@/server/signing/signing-keys';
import { freePort, serveCommandArguments } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

/** Production with every stand-in replaced: on its own, it starts (security-stand-ins.test.ts). */
const PRODUCTION = {
  VOUCH_ENV: 'production',
  SMTP_URL: 'smtp://127.0.0.1:2525',
  SMS_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000000',
  TWILIO_AUTH_TOKEN: 'token',
  TWILIO_FROM: '+15005550006',
  IDENTITY_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_x',
  STRIPE_WEBHOOK_SECRET: 'whsec_x',
  KEYS_SECRET: 'a-signing-key-secret-of-at-least-32-characters',
};

/** The process entries: `npm run serve`, `npm run web` (serve without jobs), `npm run worker`, the launcher. */
type Entry = 'serve' | 'web' | 'worker' | 'launch';

let database: TestDatabase;
/** Where an embedded PostgreSQL would go if a process wrongly started one. */
let scratch: string;

beforeAll(async () => {
  database = await createTestDatabase();
  mkdirSync('.test-data', { recursive: true });
  scratch = mkdtempSync(path.resolve('.test-data', 'production-'));
});

afterAll(async () => {
  await database?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/**
 * Runs a process entry until it exits. One that starts instead is stopped after 45 s (SIGTERM, so
 * that it stops an embedded PostgreSQL it started; SIGKILL 15 s later).
 */
async function runUntilExit(
  entry: Entry,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, serveCommandArguments(entry === 'web' ? 'serve' : entry), {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://localhost:${port}`,
      EMBEDDED_PG_DIR: path.join(scratch, `${entry}-postgres`),
      EMBEDDED_PG_PORT: String(await freePort()),
      HEALTH_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      ...(entry === 'web' ? { RUN_WORKERS: 'false' } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const stop = setTimeout(() => child.kill('SIGTERM'), 45_000);
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(stop);
  clearTimeout(kill);
  return { code, output };
}

/** The process stopped with status 1 and exactly one error line, naming `setting`; nothing else but JSON lines. */
function expectOneRefusal(result: { code: number | null; output: string }, setting: string): string {
  const lines = result.output.split('\n').filter((line) => line.trim() !== '');
  const parsed = lines.map((line) => {
    try {
      return JSON.parse(line) as { level?: string; message?: string; reason?: string };
    } catch {
      return undefined;
    }
  });
  expect(
    parsed.filter((line) => line === undefined),
    `lines that are not the log's:\n${result.output}`,
  ).toEqual([]);
  const errors = parsed.filter((line) => line?.level === 'error');
  expect(errors, result.output).toHaveLength(1);
  expect(errors[0]?.message).toBe('refusing to start');
  expect(errors[0]?.reason).toContain(setting);
  expect(result.output).not.toMatch(/^\s+at /m);
  expect(result.code, result.output).toBe(1);
  return errors[0]?.reason ?? '';
}

describe('VOUCH_ENV=production refuses, in one line naming the setting', () => {
  it.each([
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }],
    ['TWILIO_API_BASE', { TWILIO_API_BASE: 'http://api.twilio.com' }],
    ['STRIPE_API_BASE', { STRIPE_API_BASE: 'http://127.0.0.1:12111' }],
  ])(
    '%s',
    async (setting, env) => {
      const result = await runUntilExit('serve', { ...PRODUCTION, DATABASE_URL: database.url, ...env });
      expectOneRefusal(result, setting);
    },
    90_000,
  );

  it.each(['serve', 'worker', 'launch'] as const)(
    'no DATABASE_URL (the embedded database is for development): %s',
    async (entry) => {
      const result = await runUntilExit(entry, { ...PRODUCTION, DATABASE_URL: '' });
      expect(expectOneRefusal(result, 'DATABASE_URL')).toMatch(/embedded PostgreSQL is for development/);
    },
    90_000,
  );

  it('with several, one line for each', async () => {
    const result = await runUntilExit('serve', {
      ...PRODUCTION,
      DATABASE_URL: database.url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
    });
    const reasons = result.output
      .split('\n')
      .filter((line) => line.includes('"level":"error"'))
      .map((line) => (JSON.parse(line) as { reason: string }).reason);
    expect(reasons).toHaveLength(2);
    expect(reasons.some((reason) => reason.startsWith('WEBHOOK_ALLOW_PRIVATE_NETWORKS'))).toBe(true);
    expect(reasons.some((reason) => reason.startsWith('STRIPE_API_BASE'))).toBe(true);
    expect(result.code).toBe(1);
  }, 90_000);
});

describe('an unreachable DATABASE_URL', () => {
  it.each(['serve', 'web', 'worker', 'launch'] as const)(
    'stops %s with one line naming DATABASE_URL and why, not a stack trace',
    async (entry) => {
      // Nothing listens on a port just found free.
      const unreachable = `postgres://vouch:secret-password@127.0.0.1:${await freePort()}/vouch`;
      const result = await runUntilExit(entry, { DATABASE_URL: unreachable });
      const reason = expectOneRefusal(result, 'DATABASE_URL');
      expect(reason).toMatch(/ECONNREFUSED/);
      expect(result.output).not.toContain('secret-password');
    },
    90_000,
  );
});

describe('a KEYS_SECRET that is not the one the signing keys were stored under', () => {
  // KEYS_SECRET, or SIGNING_KEY_SECRET, its former name: the refusal names the one the operator set.
  it.each([
    ['serve', 'KEYS_SECRET'],
    ['worker', 'SIGNING_KEY_SECRET'],
  ] as const)(
    'stops %s with one line naming %s (a restore with the wrong secret)',
    async (entry, variable) => {
      const own = await createTestDatabase();
      try {
        // A key made under the service's secret, as the first evidence record makes one.
        await currentSigningKey(own.db, 'EdDSA', keyEncryptionKey(PRODUCTION.KEYS_SECRET), new Date());
        const result = await runUntilExit(entry, {
          DATABASE_URL: own.url,
          [variable]: 'another-secret-of-at-least-thirty-two-characters',
        });
        const reason = expectOneRefusal(result, variable);
        expect(reason).toMatch(new RegExp(`^${variable}: not the secret the signing keys were stored under`));
        expect(result.output).not.toContain('another-secret');
      } finally {
        await own.close();
      }
    },
    90_000,
  );
});

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    // As a newcomer starts it (`PORT=3950 npm start`): the URL it serves comes from its PORT.
    env: { BASE_URL: '', RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000' },
  });
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

/** Runs the operator CLI exactly as documented: `npm run --silent cli -- <args>`. */
function cli(...args: string[]): Promise<CliResult> {
  return cliWith({}, ...args);
}

/** The CLI in a shell with these variables set; like an operator's, it has no BASE_URL or PORT unless told. */
function cliWith(variables: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url };
  // vitest sets BASE_URL to "/" in its workers; an operator's shell does not.
  delete env.BASE_URL;
  delete env.PORT;
  Object.assign(env, variables);
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1);
      let json: Record<string, unknown> | undefined;
      try {
        json = last ? JSON.parse(last) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

function expectFailure(result: CliResult, message: RegExp) {
  expect(result.code, result.stdout + result.stderr).not.toBe(0);
  expect(result.stderr).toMatch(message);
  expect(result.json).toBeUndefined();
}

// Each command starts npm, node and a database connection: seconds each, far more on a busy machine.
describe('operator CLI', { timeout: 180_000 }, () => {
  let teamId: string;
  let apiKey: string;

  it('db migrate applies migrations and prints JSON', async () => {
    const result = await cli('db', 'migrate');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toEqual({ migrated: true });
  });

  it('teams create prints the team, a working API key and the console link', async () => {
    const result = await cli('teams', 'create', '--name', 'Acme Corp', '--admin-email', 'owner@acme.test');
    expect(result.code, result.stderr).toBe(0);
    const json = result.json as Record<string, string>;
    expect(json).toMatchObject({
      name: 'Acme Corp',
      plan: 'trial',
      subscription_status: 'trialing',
      admin_email: 'owner@acme.test',
    });
    expect(json.team_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.key_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.api_key).toMatch(/^vouch_live_[A-Za-z0-9]{32,}$/);
    // The service's own URL, which the CLI's shell does not know: the one the app recorded.
    expect(json.console_url).toBe(`${app.baseUrl}/console`);
    teamId = json.team_id as string;
    apiKey = json.api_key as string;
    const account = await apiClient(app.baseUrl, apiKey).get('/v1/account/');
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ id: teamId, name: 'Acme Corp', plan: 'trial' });
    // Only a hash of the key is stored.
    const stored =
      await database.sql`select key_hash, prefix, last_four from api_keys where id = ${json.key_id as string}`;
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(stored[0]?.last_four).toBe(apiKey.slice(-4));
  });

  it('teams create --plan starts a paid plan active', async () => {
    const result = await cli(
      'teams',
      'create',
      '--name',
      'Paid',
      '--admin-email',
      'owner@paid.test',
      '--plan',
      'growth',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ plan: 'growth', subscription_status: 'active' });
  });

  it('teams list prints every team with the id the other commands take; --name narrows them', async () => {
    const result = await cli('teams', 'list');
    expect(result.code, result.stderr).toBe(0);
    const listed = (result.json as { teams: Array<Record<string, unknown>> }).teams;
    expect(listed.find((team) => team.team_id === teamId)).toEqual({
      team_id: teamId,
      name: 'Acme Corp',
      plan: 'trial',
      subscription_status: 'trialing',
      trial_ends_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(listed.find((team) => team.name === 'Paid')).toMatchObject({
      plan: 'growth',
      trial_ends_at: null,
    });
    const narrowed = await cli('teams', 'list', '--name', 'acme');
    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(
      (narrowed.json as { teams: Array<{ team_id: string }> }).teams.map((team) => team.team_id),
    ).toEqual([teamId]);
  });

  it('teams update changes plan, status, balance and trial end, and the API sees it', async () => {
    const result = await cli(
      'teams',
      'update',
      '--team',
      teamId,
      '--plan',
      'starter',
      '--subscription-status',
      'active',
      '--topup-cents',
      '1500',
      '--trial-ends-at',
      '2030-01-02T03:04:05Z',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toEqual({
      team_id: teamId,
      plan: 'starter',
      subscription_status: 'active',
      topup_balance_cents: 1500,
      trial_ends_at: '2030-01-02T03:04:05.000Z',
      retention_days: null,
      rate_limit_read_per_minute: null,
      rate_limit_write_per_minute: null,
    });
    const account = await apiClient(app.baseUrl, apiKey).get('/v1/account/');
    expect(account.body).toMatchObject({
      plan: 'starter',
      subscription_status: 'active',
      topup_balance_cents: 1500,
    });

    const canceled = await cli('teams', 'update', '--team', teamId, '--subscription-status', 'canceled');
    expect(canceled.code, canceled.stderr).toBe(0);
    const refused = await apiClient(app.baseUrl, apiKey).post('/v1/cases/', {
      subject_email: 's@acme.test',
      verification_methods: { email: true },
    });
    expectError(refused, 422, 'TRIAL_EXPIRED');
  });

  it('keys create makes a second working key; keys revoke makes its next request a 401', async () => {
    const created = await cli('keys', 'create', '--team', teamId);
    expect(created.code, created.stderr).toBe(0);
    const json = created.json as Record<string, string>;
    expect(json.team_id).toBe(teamId);
    expect(json.api_key).toMatch(/^vouch_live_/);
    expect(json.api_key).not.toBe(apiKey);
    const client = apiClient(app.baseUrl, json.api_key);
    expect((await client.get('/v1/account/')).status).toBe(200);

    const revoked = await cli('keys', 'revoke', '--key', json.key_id as string);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json).toEqual({ key_id: json.key_id, revoked: true });
    const res = await client.get('/v1/account/');
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    // The team's other key still works.
    expect((await apiClient(app.baseUrl, apiKey).get('/v1/account/')).status).toBe(200);
  });

  it('teams create prints the URL the service last started with, unless BASE_URL is set where it runs', async () => {
    const explicit = await cliWith(
      { BASE_URL: 'https://vouch.acme.example/' },
      'teams',
      'create',
      '--name',
      'Explicit',
      '--admin-email',
      'owner@explicit.test',
    );
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(explicit.json?.console_url).toBe('https://vouch.acme.example/console');

    // Started again elsewhere (several web processes record the same URL; the last start wins).
    const moved = await startApp({ databaseUrl: database.url, env: { BASE_URL: '', RUN_WORKERS: 'false' } });
    try {
      const result = await cli('teams', 'create', '--name', 'Moved', '--admin-email', 'owner@moved.test');
      expect(result.code, result.stderr).toBe(0);
      expect(result.json?.console_url).toBe(`${moved.baseUrl}/console`);
      expect(moved.baseUrl).not.toBe(app.baseUrl);
    } finally {
      await moved.stop();
    }
  });

  // Help asks nothing of the database: these run with one that cannot be reached.
  it.concurrent.each([
    [['--help'], 'usage: npm run --silent cli -- <command> [options]'],
    [['-h'], 'usage: npm run --silent cli -- <command> [options]'],
    [['help'], 'usage: npm run --silent cli -- <command> [options]'],
    [['teams', '--help'], 'usage: npm run --silent cli -- teams <command> [options]'],
    [['keys', 'help'], 'usage: npm run --silent cli -- keys <command> [options]'],
    [
      ['teams', 'create', '--help'],
      'usage: npm run --silent cli -- teams create --name NAME --admin-email EMAIL',
    ],
    [
      ['teams', 'create', 'help'],
      'usage: npm run --silent cli -- teams create --name NAME --admin-email EMAIL',
    ],
    [['help', 'teams', 'update'], 'usage: npm run --silent cli -- teams update --team TEAM_ID'],
    [['teams', 'update', '-h'], 'usage: npm run --silent cli -- teams update --team TEAM_ID'],
    [['teams', 'list', '--help'], 'usage: npm run --silent cli -- teams list [--name TEXT]'],
    [['keys', 'create', '--help'], 'usage: npm run --silent cli -- keys create --team TEAM_ID'],
    [['keys', 'revoke', 'help'], 'usage: npm run --silent cli -- keys revoke --key KEY_ID'],
    [['db', 'migrate', '--help'], 'usage: npm run --silent cli -- db migrate'],
    [['help', 'db', 'migrate'], 'usage: npm run --silent cli -- db migrate'],
  ] as Array<[string[], string]>)('%j prints its usage and exits 0', async (args, usage) => {
    const result = await cliWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, ...args);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.startsWith(`${usage}`), result.stdout).toBe(true);
    expect(result.stderr).toBe('');
  });

  it('runs built JavaScript, built again first when a source is newer than the build', async () => {
    const inputs = path.resolve('dist/cli/inputs.json');
    const listed: string[] = JSON.parse(readFileSync(inputs, 'utf8'));
    expect(listed).toContain('cli/index.ts');
    expect(listed).toContain('server/platform/env.ts');
    // As if cli/usage.ts had been edited after the last build: the build is dated before it.
    const source = statSync('cli/usage.ts').mtime;
    utimesSync(inputs, new Date(source.getTime() - 60_000), new Date(source.getTime() - 60_000));
    // Four commands at once, as a provisioning script starts them: each answers from a whole build.
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => cliWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '--help')),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const rebuilt = statSync(inputs).mtime;
    expect(rebuilt.getTime()).toBeGreaterThanOrEqual(source.getTime());
    expect(existsSync('dist/cli.lock')).toBe(false);
    // Up to date: the next command builds nothing.
    expect((await cliWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '--help')).code).toBe(0);
    expect(statSync(inputs).mtime).toEqual(rebuilt);
  });

  it('teams update --help says what each plan includes and what a unit past it costs, without a database', async () => {
    const result = await cliWith(
      { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      'teams',
      'update',
      '--help',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}trial +50 units of each method per billing period, for 14 days/m);
    expect(result.stdout).toMatch(/^ {2}starter +500 units/m);
    expect(result.stdout).toMatch(/^ {2}growth +5,000 units/m);
    expect(result.stdout).toMatch(/^ {2}enterprise +100,000 units/m);
    expect(result.stdout.replaceAll('\n', ' ')).toContain(
      'email 10, sms 25, government_id 150, selfie 50, custom_question 5, manager 20, passkey 10',
    );
  });

  it('the full usage lists every command', async () => {
    const result = await cliWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '--help');
    for (const command of [
      'teams create',
      'teams list',
      'teams update',
      'keys create',
      'keys revoke',
      'db migrate',
    ]) {
      expect(result.stdout).toContain(`\n  ${command}`);
    }
    // A command's options wrap between options, to lines of 100 columns (cli/usage.test.ts).
    expect(result.stdout.replace(/\n +/g, ' ')).toContain(
      '[--rate-limit-read N|default] [--rate-limit-write N|default]',
    );
  });

  it.concurrent.each([
    [
      ['teams', 'create', '--name', 'A', '--bogus'],
      /unknown option --bogus for "teams create"/,
      'teams create',
    ],
    [['keys', 'revoke', '--key'], /Option '--key <value>' argument missing/, 'keys revoke'],
    [['teams', 'create', 'extra', '--name', 'A'], /unexpected argument "extra"/, 'teams create'],
    [['db', 'migrate', '--force'], /unknown option --force for "db migrate"/, 'db migrate'],
    [['teams'], /"teams" needs a command/, 'teams <command>'],
  ] as Array<[string[], RegExp, string]>)(
    '%j names the mistake and the usage, with no stack trace',
    async (args, message, usage) => {
      const result = await cliWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, ...args);
      expectFailure(result, message);
      expect(result.stderr).toContain(`usage: npm run --silent cli -- ${usage}`);
      expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(result.stderr).not.toContain('place it at the end of the command');
    },
  );

  // Independent of each other and of the database state: run side by side to save the start-up time.
  it.concurrent.each([
    [['teams', 'create', '--name', 'No email'], /--admin-email is required/],
    [
      ['teams', 'create', '--name', 'Bad plan', '--admin-email', 'a@b.test', '--plan', 'platinum'],
      /unknown plan "platinum"/,
    ],
    [['teams', 'update', '--team', 'not-a-uuid', '--plan', 'starter'], /--team must be a UUID/],
    [
      ['teams', 'update', '--team', '00000000-0000-4000-8000-000000000000', '--topup-cents=-5'],
      />=|too small/i,
    ],
    [['teams', 'update', '--team', '00000000-0000-4000-8000-000000000000'], /nothing to update/],
    [['keys', 'create', '--team', '00000000-0000-4000-8000-000000000000'], /no team/],
    [['keys', 'revoke', '--key', '00000000-0000-4000-8000-000000000000'], /no key/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ] as Array<[string[], RegExp]>)(
    '%j fails on stderr with a non-zero exit and no JSON',
    async (args, message) => {
      const result = await cli(...args);
      expectFailure(result, message);
      expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    },
  );
});

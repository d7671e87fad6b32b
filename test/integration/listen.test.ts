import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { freePort, type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { toExit } from '@/test/support/newcomer-shell';
import { conformanceForChild } from '@/test/support/openapi-conformance';

/** `npm run listen`: events of the API forwarded, signed, to a receiver on this machine. */
let database: TestDatabase;
let app: RunningApp;
let token: string;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
let answerStatus = 200;
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const { key } = await createTeam(
    database.db,
    { name: 'Listen', adminEmail: 'admin@listen.test' },
    systemClock,
  );
  token = key.token;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answerStatus).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
}, 120_000);

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGTERM');
  received.length = 0;
  answerStatus = 200;
});

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await app?.stop();
  await database?.close();
});

function listen(args: string[], apiKey = token, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['scripts/run-cli.mjs', 'listen', ...args], {
    env: {
      ...process.env,
      // listen's own calls to the app are checked against the document too.
      ...conformanceForChild(),
      VOUCH_API_KEY: apiKey,
      VOUCH_URL: app.baseUrl,
      LISTEN_POLL_MS: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exited };
}

async function createCase(email: string) {
  const res = await apiClient(app.baseUrl, token).post<{ id: string }>('/v1/cases/', {
    subject_email: email,
    verification_methods: { email: true },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('listen', () => {
  it('forwards each new event, signed with the printed secret, byte for byte, and prints the answer', async () => {
    await createCase('before@example.test');
    const session = listen(['--forward-to', receiverUrl]);
    const secret = await eventually(
      async () => session.output().match(/secret for this session: (whsec_\S+)/)?.[1],
    );
    await eventually(async () => session.output().includes('Ready.'));

    const created = await createCase('after@example.test');
    const [forwarded] = await eventually(async () => (received.length > 0 ? received : undefined));
    if (!forwarded) throw new Error('nothing forwarded');
    const envelope = JSON.parse(forwarded.body) as { id: string; type: string; data: { case_id: string } };
    expect(envelope.type).toBe('case.created');
    expect(envelope.data.case_id).toBe(created.id);
    const fromApi = await apiClient(app.baseUrl, token).get(`/v1/events/${envelope.id}/`);
    expect(forwarded.body).toBe(fromApi.text);

    const h = forwarded.headers;
    expect(h['x-service-event']).toBe('case.created');
    expect(await verify(secret, forwarded.body, String(h['x-service-signature']))).toBe(true);
    expect(
      new Webhook(secret).verify(forwarded.body, {
        'webhook-id': String(h['webhook-id']),
        'webhook-timestamp': String(h['webhook-timestamp']),
        'webhook-signature': String(h['webhook-signature']),
      }),
    ).toMatchObject({ id: envelope.id });

    await eventually(async () => session.output().includes(`case.created  ${envelope.id}  -> 200 (`));
    // The case made before the session is not forwarded, and nothing is forwarded twice: once a
    // later event has come through (the session reads events oldest first), those are all.
    const later = await createCase('later@example.test');
    await eventually(async () => (received.length > 1 ? true : undefined));
    const forwardedCases = received.map(
      (r) => (JSON.parse(r.body) as { data: { case_id: string } }).data.case_id,
    );
    expect(forwardedCases).toEqual([created.id, later.id]);
  });

  it('prints what the receiver answered, and forwards only the types asked for', async () => {
    answerStatus = 500;
    const session = listen(['--forward-to', receiverUrl, '--events', 'case.created']);
    await eventually(async () => session.output().includes('Ready.'));
    const created = await createCase('failing@example.test');
    await eventually(async () => /case\.created {2}evt_\S+ {2}-> 500 \(/.test(session.output()));
    const [event] = (
      await apiClient(app.baseUrl, token).get<{ results: Array<{ id: string }> }>(
        `/v1/events/?case_id=${created.id}`,
      )
    ).body.results;
    expect(session.output()).toContain(`case.created  ${event?.id}  -> 500 (`);

    const other = listen(['--forward-to', receiverUrl, '--events', 'case.expired']);
    await eventually(async () => other.output().includes('Ready.'));
    const before = received.length;
    // A case made, then canceled: case.created, then case.expired.
    const filtered = await createCase('filtered@example.test');
    const canceled = await apiClient(app.baseUrl, token).post(`/v1/cases/${filtered.id}/cancel/`, {});
    expect(canceled.status, canceled.text).toBe(200);
    // Each session forwarded its own type; the second had read past the case.created by the time
    // it forwarded the case.expired that followed it.
    await eventually(async () =>
      /case\.expired {2}evt_\S+ {2}-> 500 \(/.test(other.output()) ? true : undefined,
    );
    await eventually(async () =>
      (session.output().match(/case\.created {2}evt_\S+ {2}-> 500 \(/g) ?? []).length === 2
        ? true
        : undefined,
    );
    expect(other.output()).not.toMatch(/case\.created/);
    const types = received.slice(before).map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types.sort()).toEqual(['case.created', 'case.expired']);
  });

  it('refuses to start without a working key or with a bad URL', async () => {
    const badKey = listen(['--forward-to', receiverUrl], 'vouch_live_nope');
    expect(await badKey.exited).toBe(1);
    expect(badKey.output()).toContain('GET /v1/events/ answered 401');
    const badUrl = listen(['--forward-to', 'ftp://example.test/']);
    expect(await badUrl.exited).toBe(1);
    expect(badUrl.output()).toContain('--forward-to must be an http or https URL');
  });

  it('sends the key only to the API it was given, never in the clear, and takes secrets from the environment only', async () => {
    // An "API" whose page names its next page on another origin: the key must not follow it.
    const elsewhere: IncomingHttpHeaders[] = [];
    const thief = createServer((req, res) => {
      elsewhere.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"next":null,"results":[]}');
    });
    const rogueApi = createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ next: `http://127.0.0.1:${portOf(thief)}/v1/events/?cursor=x`, results: [] }));
    });
    await Promise.all([thief, rogueApi].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    try {
      const led = listen(['--forward-to', receiverUrl, '--api-url', `http://127.0.0.1:${portOf(rogueApi)}`]);
      expect(await led.exited).toBe(1);
      expect(led.output()).toContain('next page on another origin');
      expect(elsewhere).toEqual([]);
    } finally {
      await Promise.all([thief, rogueApi].map((s) => new Promise((r) => s.close(r))));
    }

    // Plain http carries the key only to this machine.
    for (const apiUrl of ['http://api.example.test', 'http://10.0.0.5:3000', 'ftp://localhost/']) {
      const refused = listen(['--forward-to', receiverUrl, '--api-url', apiUrl]);
      expect(await refused.exited, apiUrl).toBe(1);
      expect(refused.output(), apiUrl).toContain('the API URL must be https');
    }
    const viaEnv = listen(['--forward-to', receiverUrl], token, { VOUCH_URL: 'http://api.example.test' });
    expect(await viaEnv.exited).toBe(1);
    expect(viaEnv.output()).toContain('the API URL must be https');
    // The variable it read before VOUCH_URL still works, and says to use VOUCH_URL.
    const viaOldName = listen(['--forward-to', receiverUrl], token, {
      VOUCH_URL: '',
      VOUCH_API_URL: 'http://api.example.test',
    });
    expect(await viaOldName.exited).toBe(1);
    expect(viaOldName.output()).toContain('VOUCH_API_URL is deprecated: set VOUCH_URL');
    expect(viaOldName.output()).toContain('the API URL must be https');

    // Secrets on the command line (visible in `ps`) are refused, pointing at the variable.
    const keyArg = listen(['--forward-to', receiverUrl, '--api-key', token], '');
    expect(await keyArg.exited).toBe(1);
    expect(keyArg.output()).toContain('set VOUCH_API_KEY');
    const secretArg = listen(['--forward-to', receiverUrl, '--secret', 'whsec_x']);
    expect(await secretArg.exited).toBe(1);
    expect(secretArg.output()).toContain('set VOUCH_LISTEN_SECRET');

    // The signing secret chosen through the environment signs the forwards.
    const chosen = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const session = listen(['--forward-to', receiverUrl, '--events', 'case.created'], token, {
      VOUCH_LISTEN_SECRET: chosen,
    });
    await eventually(async () => session.output().includes('Ready.'));
    expect(session.output()).toContain(`secret for this session: ${chosen}`);
    await createCase('chosen-secret@example.test');
    const [forwarded] = await eventually(async () => (received.length > 0 ? received : undefined));
    expect(
      await verify(chosen, forwarded?.body ?? '', String(forwarded?.headers['x-service-signature'])),
    ).toBe(true);
  });
});

/** `npm run --silent listen -- <args>`, as the README says to run it, to its exit. */
function npmListen(args: string[], env: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', 'listen', '--', ...args], {
    env: { ...process.env, VOUCH_API_KEY: token, VOUCH_URL: app.baseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return toExit(child);
}

const STACK_FRAME = /\n\s+at .+:\d+:\d+/;

describe('listen explains itself', () => {
  it('answers --help, -h and help with its usage on stdout and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['--forward-to', receiverUrl, '--help']]) {
      const result = await npmListen(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(
        /^usage: VOUCH_API_KEY=vouch_test_\.\.\. npm run --silent listen -- --forward-to URL/,
      );
      expect(result.stdout).toContain('VOUCH_URL');
      expect(result.stderr).toBe('');
    }
  });

  it('names an unknown option or a stray word with its usage, never a stack trace', async () => {
    for (const [args, message] of [
      [['--forward-to', receiverUrl, '--bogus'], 'unknown option --bogus'],
      [['--forward-to', receiverUrl, 'extra'], 'unexpected argument "extra"'],
      [['--forward-to'], "Option '--forward-to <value>' argument missing"],
    ] as Array<[string[], string]>) {
      const result = await npmListen(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain('usage: VOUCH_API_KEY=');
      expect(result.stderr).not.toMatch(STACK_FRAME);
      expect(result.stderr).not.toContain('ERR_PARSE_ARGS');
    }
  });

  it('with no service at its URL, names the URL it tried and the variable that sets it', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const result = await npmListen(['--forward-to', receiverUrl], { VOUCH_URL: nowhere });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach Vouch at ${nowhere} (connect ECONNREFUSED`);
    expect(result.stderr).toContain('VOUCH_URL sets where it is');
    expect(result.stderr).not.toMatch(STACK_FRAME);
  });
});

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

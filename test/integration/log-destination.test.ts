/**
 * A web process whose log destination goes away (the pipe to a supervisor that died: EPIPE on
 * every line) keeps serving, quietly. It used to spin a core and stop answering: each failed write
 * reached Next's uncaughtException handler, which logged it, which failed again.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, serveCommandArguments } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** CPU time (user + system) the process has used, in clock ticks (100 a second here). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

it('keeps serving when its stdout and stderr are closed, without spinning', async () => {
  const port = await freePort();
  const { BASE_URL: _vitestBaseUrl, ...inherited } = process.env;
  const child = spawn(process.execPath, serveCommandArguments('serve'), {
    env: {
      ...inherited,
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(await freePort()),
      RUN_WORKERS: 'false',
      // A line for every request: every request meets the broken pipe.
      LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    await eventually(async () => output.includes('vouch is ready') || undefined, 60_000);
    child.stdout.destroy();
    child.stderr.destroy();

    // A generous wait: on a loaded machine a fresh process's first answers can take seconds, and
    // a process that spins on its broken pipe never answers at all (nor idles, checked below).
    const ping = () =>
      fetch(`http://127.0.0.1:${port}/v1/ping`, { signal: AbortSignal.timeout(15_000) }).then(
        (res) => res.status,
      );
    for (let i = 0; i < 20; i++) expect(await ping()).toBe(200);
    const pid = child.pid as number;
    const before = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Idle after its requests: well under a third of a core (it spun a whole one).
    expect(cpuTicks(pid) - before).toBeLessThan(100);
    expect(await ping()).toBe(200);
    expect(child.exitCode).toBeNull();
  } finally {
    child.kill('SIGKILL');
  }
}, 90_000);

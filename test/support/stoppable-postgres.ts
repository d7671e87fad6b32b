import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface StoppablePostgres {
  url: string;
  stop: () => Promise<void>;
  start: () => Promise<void>;
  close: () => Promise<void>;
}

/** A PostgreSQL of the test's own (test/support/postgres-control.ts), to take down and bring back. */
export async function startStoppablePostgres(): Promise<StoppablePostgres> {
  mkdirSync('.test-data', { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/postgres-control.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  let ready: (url: string) => void = () => {};
  const url = new Promise<string>((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code) => reject(new Error(`postgres control exited with ${code}`)));
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    if (line.startsWith('{')) return ready((JSON.parse(line) as { url: string }).url);
    const index = waiting.findIndex((w) => w.line === line);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve();
  });
  const command = (line: string, answer: string) =>
    new Promise<void>((resolve) => {
      waiting.push({ line: answer, resolve });
      child.stdin?.write(`${line}\n`);
    });
  return {
    url: await url,
    stop: () => command('stop', 'stopped'),
    start: () => command('start', 'started'),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      await exited;
    },
  };
}

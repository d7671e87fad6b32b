import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '@/db/client';
import { buildProcesses } from '@/test/support/app';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A database URL for creating and dropping the per-file test databases. */
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

// Unique per run: two runs sharing one server (CI's PostgreSQL 15, or two engineers' runs) must not
// drop each other's template while the other is copying it.
const TEMPLATE = `vouch_test_template_${process.pid}_${Date.now().toString(36)}`;

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

interface SharedServer {
  adminUrl: string;
  /** Named once: each project loads this module anew, with a TEMPLATE of its own. */
  template: string;
  users: number;
  stop: () => Promise<void>;
}

/**
 * Both database-backed projects (domain, integration) name this setup; in one run they share one
 * server and one template. Their setups run in vitest's main process, hence the global.
 */
const shared = globalThis as { __vouchTestServer?: Promise<SharedServer> };

async function startServer(): Promise<SharedServer> {
  let child: ChildProcess | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    mkdirSync('.test-data', { recursive: true });
    child = spawn(process.execPath, ['--import', 'tsx', 'test/setup/database-server.ts'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    adminUrl = await new Promise<string>((resolve, reject) => {
      child?.once('exit', (code) => reject(new Error(`test database server exited with ${code}`)));
      lines.on('line', (line) => {
        try {
          resolve((JSON.parse(line) as { adminUrl: string }).adminUrl);
        } catch {
          // not the ready line
        }
      });
    });
  }
  const url = adminUrl;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${TEMPLATE} with (force)`);
  await admin.unsafe(`create database ${TEMPLATE}`);
  await admin.end();
  await migrateDatabase(withDatabase(url, TEMPLATE));
  return {
    adminUrl: url,
    template: TEMPLATE,
    users: 0,
    stop: async () => {
      const dropper = postgres(url, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${TEMPLATE} with (force)`).catch(() => {});
      await dropper.end();
      if (child) {
        const exited = new Promise((resolve) => child?.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/**
 * One PostgreSQL per test run: the embedded server by default, or the server named by
 * TEST_DATABASE_URL (CI's PostgreSQL 15). Migrations run once into a template database; each test
 * file then copies it (`CREATE DATABASE … TEMPLATE`), which is fast and fully isolated.
 */
export default async function setup(project: TestProject) {
  // The black-box suite runs the service's built processes: built here (half a second) so that
  // they are never older than the code under test, as `next build` output can be.
  if (project.name === 'integration') buildProcesses();
  shared.__vouchTestServer ??= startServer();
  const server = await shared.__vouchTestServer;
  server.users += 1;
  project.provide('adminDatabaseUrl', server.adminUrl);
  project.provide('templateDatabase', server.template);

  return async () => {
    server.users -= 1;
    if (server.users > 0) return;
    shared.__vouchTestServer = undefined;
    await server.stop();
  };
}

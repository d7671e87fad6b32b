/**
 * A process's readiness (server/platform/readiness.ts) against a real PostgreSQL: ready on a
 * migrated database, `schema` on one whose migrations have not all run (or none at all),
 * `database` when nothing answers (within its 1.5 s, whatever the server does), `draining` once
 * told to stop; and `/livez`, `/readyz` as they are answered.
 */
import { createServer, type Server } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '@/db/client';
import {
  expectedMigrationMillis,
  healthAnswer,
  READINESS_TIMEOUT_MS,
  readinessProbe,
  schemaIsCurrent,
} from '@/server/platform/readiness';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let emptyUrl: string;
const adminUrl = () => inject('adminDatabaseUrl');
const emptyName = `vouch_empty_${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  database = await createTestDatabase();
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${emptyName}`);
  await admin.end();
  const url = new URL(adminUrl());
  url.pathname = `/${emptyName}`;
  emptyUrl = url.toString();
});

afterAll(async () => {
  await database?.close();
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${emptyName} with (force)`);
  await admin.end();
});

describe('readiness', () => {
  it('expects the newest migration this build carries', async () => {
    const { readFile } = await import('node:fs/promises');
    const journal = JSON.parse(await readFile(`${MIGRATIONS_FOLDER}/meta/_journal.json`, 'utf8')) as {
      entries: Array<{ when: number }>;
    };
    expect(expectedMigrationMillis()).toBe(journal.entries.at(-1)?.when);
    expect(journal.entries.length).toBeGreaterThan(25);
  });

  it('holds the schema current on a migrated database, not on one a migration behind or empty', async () => {
    const expected = expectedMigrationMillis();
    expect(await schemaIsCurrent(database.sql, expected)).toBe(true);
    expect(await schemaIsCurrent(database.sql, expected + 1)).toBe(false);
    const empty = postgres(emptyUrl, { max: 1, onnotice: () => {} });
    try {
      expect(await schemaIsCurrent(empty, expected)).toBe(false);
    } finally {
      await empty.end();
    }
  });

  it('is ready on a migrated database; `schema` a migration behind; `draining` once told to stop', async () => {
    const ready = readinessProbe(database.url);
    const behind = readinessProbe(database.url, { expectedMigration: expectedMigrationMillis() + 1 });
    const empty = readinessProbe(emptyUrl);
    try {
      expect(await ready.check()).toEqual([]);
      expect(await behind.check()).toEqual(['schema']);
      expect(await empty.check()).toEqual(['schema']);
      expect(ready.draining).toBe(false);
      ready.markDraining();
      expect(ready.draining).toBe(true);
      expect(await ready.check()).toEqual(['draining']);
      behind.markDraining();
      expect(await behind.check()).toEqual(['draining', 'schema']);
    } finally {
      await Promise.all([ready.close(), behind.close(), empty.close()]);
    }
  });

  it('says `database` within its time-out when nothing answers, or the server never replies', async () => {
    // A port where nothing listens: refused at once.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    // A server that takes the connection and never says a word: only the time-out answers.
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const refused = readinessProbe(`postgres://nobody@127.0.0.1:${closedPort}/none`, {
      expectedMigration: 0,
    });
    const hanging = readinessProbe(`postgres://nobody@127.0.0.1:${silentPort}/none`, {
      expectedMigration: 0,
    });
    try {
      expect(await refused.check()).toEqual(['database']);
      const started = performance.now();
      expect(await hanging.check()).toEqual(['database']);
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(READINESS_TIMEOUT_MS - 50);
      // The probe's own deadline, not the driver's connection time-out, ended it.
      expect(took).toBeLessThan(READINESS_TIMEOUT_MS + 1_000);
    } finally {
      silent.close();
      await Promise.all([refused.close(), hanging.close()]).catch(() => undefined);
    }
  });

  it('answers /livez without a probe, /readyz with its reasons, and nothing else', async () => {
    expect(await healthAnswer('/livez', undefined)).toEqual({ status: 200, body: '{"status":"live"}' });
    expect(await healthAnswer('/readyz', undefined)).toEqual({
      status: 503,
      body: '{"status":"unready","reasons":["database"]}',
    });
    expect(await healthAnswer('/healthz', undefined)).toBeNull();
    expect(await healthAnswer('/readyz/', undefined)).toBeNull();
    const probe = readinessProbe(database.url);
    try {
      expect(await healthAnswer('/readyz', probe)).toEqual({ status: 200, body: '{"status":"ready"}' });
      probe.markDraining();
      expect(await healthAnswer('/readyz', probe)).toEqual({
        status: 503,
        body: '{"status":"unready","reasons":["draining"]}',
      });
    } finally {
      await probe.close();
    }
  });
});

/**
 * Migration 0028 gives templates a mode. Templates made before it were shared by both modes: each
 * must become live (what live cases and live clients use) and keep a test copy, so a test key or a
 * test client that named one still finds one, and a test client's default template must become
 * the test copy. Run on a database migrated to 0027 holding such templates, then migrated on.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '@/db/client';

const adminUrl = inject('adminDatabaseUrl');
const name = `vouch_migration_${process.pid}_${Date.now()}`;
let sql: postgres.Sql;
let before0028: string;

/** The committed migrations up to (not including) `tag`, as a folder drizzle's migrator reads. */
function migrationsBefore(tag: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'vouch-migrations-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
  const cut = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

beforeAll(async () => {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  before0028 = migrationsBefore('0028_templates-per-mode');
  await migrate(drizzle(sql), { migrationsFolder: before0028 });
});

afterAll(async () => {
  await sql?.end();
  rmSync(before0028, { recursive: true, force: true });
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe('migration 0028: templates per mode', () => {
  it('keeps every template live, adds a test copy of each, and points test clients at the copy', async () => {
    const [team] = await sql<Array<{ id: string }>>`
      insert into teams (name, plan_code, subscription_status) values ('Before', 'trial', 'trialing') returning id`;
    const teamId = team?.id ?? '';
    const settings = { custom_question: { question: 'Floor?', answer_hash: 'h', answer_salt: 's' } };
    const [helpdesk] = await sql<Array<{ id: string }>>`
      insert into verification_templates (team_id, name, methods, settings, locale)
      values (${teamId}, 'helpdesk', ${JSON.stringify({ email: true, custom_question: true })}::jsonb, ${JSON.stringify(settings)}::jsonb, 'de')
      returning id`;
    const templateId = helpdesk?.id ?? '';
    for (const [id, livemode] of [
      ['vouch_client_testclienttestclienttest', false],
      ['vouch_client_liveclientliveclientlive', true],
    ] as const) {
      await sql`
        insert into oidc_clients (id, team_id, livemode, name, redirect_uris, default_template_id, secret_hash, secret_hint)
        values (${id}, ${teamId}, ${livemode}, ${id}, ${JSON.stringify(['https://rp.example/cb'])}::jsonb, ${templateId}, 'x', 'x')`;
    }

    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });

    const templates = await sql<Array<{ id: string; livemode: boolean; name: string; settings: unknown }>>`
      select id, livemode, name, settings, locale from verification_templates order by livemode desc`;
    expect(templates).toEqual([
      expect.objectContaining({ id: templateId, livemode: true, name: 'helpdesk', settings, locale: 'de' }),
      expect.objectContaining({ livemode: false, name: 'helpdesk', settings, locale: 'de' }),
    ]);
    const testCopy = templates[1]?.id;
    expect(testCopy).not.toBe(templateId);
    const clients = await sql<Array<{ livemode: boolean; default_template_id: string }>>`
      select livemode, default_template_id from oidc_clients order by livemode desc`;
    expect(clients).toEqual([
      { livemode: true, default_template_id: templateId },
      { livemode: false, default_template_id: testCopy },
    ]);
  });
});

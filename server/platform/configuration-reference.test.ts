import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationPage, configurationReference, referencedVariables } from './configuration-reference';
import { envSchema } from './env';

/** Source files of the processes (tests apart): server/, processes/, db/, cli/. */
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const file = path.join(folder, name);
    if (statSync(file).isDirectory()) return sources(file);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [file] : [];
  });
}

/** Variables the processes read from the environment: `process.env.X`, and `source.X` in env readers. */
function variablesRead(): Map<string, string> {
  const read = new Map<string, string>();
  for (const file of ['server', 'processes', 'db', 'cli'].flatMap(sources)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\b(?:process\.env|source)\.([A-Z][A-Z0-9_]+)\b/g)) {
      read.set(match[1] as string, file);
    }
  }
  return read;
}

/** The CLI's and `listen`'s own (a developer's terminal, not the service's processes). */
const CLIENT_TOOLS = new Set([
  'VOUCH_URL',
  'VOUCH_API_URL',
  'VOUCH_API_KEY',
  'VOUCH_LISTEN_SECRET',
  'LISTEN_POLL_MS',
  // npm's own: the folder `npm run cli` was run from, for a relative file name.
  'INIT_CWD',
]);

describe('the configuration reference (docs/configuration.md)', () => {
  it('is the page the reference generates (run `npm run docs:configuration` after changing it)', () => {
    expect(readFileSync('docs/configuration.md', 'utf8')).toBe(configurationPage());
  });

  it('lists every validated setting once, with the default the schema applies', () => {
    const rows = configurationReference();
    const names = rows.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of Object.keys(envSchema.shape)) expect(names).toContain(name);
    const defaults = new Map(rows.map((row) => [row.name, row.default]));
    expect(defaults.get('PORT')).toBe('`3000`');
    expect(defaults.get('WEBHOOK_RETRY_SCHEDULE')).toBe('`30,120,900,3600,14400,43200,86400`');
    expect(defaults.get('MIGRATE_ON_START')).toBe('`true`');
    expect(defaults.get('DATABASE_URL')).toMatch(/^unset: /);
    for (const row of rows) {
      expect(row.meaning, row.name).not.toBe('');
      expect(row.processes.length, row.name).toBeGreaterThan(0);
    }
  });

  it('names every variable a process reads', () => {
    const listed = referencedVariables();
    const missing = [...variablesRead()]
      .filter(([name]) => !listed.has(name) && !CLIENT_TOOLS.has(name))
      .map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });
});

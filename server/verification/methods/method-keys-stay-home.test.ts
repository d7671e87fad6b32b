import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema/values';

/**
 * A method's key, as a quoted string, belongs in its own folder, the registry, the database's
 * value list and migrations, tests and docs: everything else asks the registry or the method's
 * module, so that adding a method never means hunting for its neighbours' keys.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const SOURCES = ['server', 'app', 'cli', 'processes'];
const HOME = 'server/verification/methods/';

/**
 * Lines where the same word is not a method's key: a validator's format, the
 * field-name guesses of the validation messages, the OpenAPI document's examples, the
 * recipients of mailed links, the claims an identity provider sends (its `email` claim), and
 * the nouns of not-found messages (a passkey, the thing the API manages).
 */
const NOT_A_METHOD = [
  /format === 'email'/,
  /^\s*names: \[/,
  /examples: \[/,
  /mailsLinkTo === 'manager'/,
  /EMAIL_CLAIM = 'email'/,
  /noun: '/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [full] : [];
  });
}

describe('method keys', () => {
  it('appear quoted only in their own folders and the registry', () => {
    // Code quotes with single quotes (Biome's style); double quotes and backticks stand inside
    // messages and descriptions, or are HTML attributes.
    const key = new RegExp(`'(${VERIFICATION_METHODS.join('|')})'`);
    const found: string[] = [];
    for (const source of SOURCES) {
      for (const file of sourceFiles(path.join(ROOT, source))) {
        const relative = path.relative(ROOT, file);
        if (relative.startsWith(HOME)) continue;
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, index) => {
            if (key.test(line) && !NOT_A_METHOD.some((allowed) => allowed.test(line))) {
              found.push(`${relative}:${index + 1}: ${line.trim()}`);
            }
          });
      }
    }
    expect(found).toEqual([]);
  });
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema/values';

/**
 * A method's key belongs in its own folder (server/verification/methods/<method>/), the database's
 * value list and migrations, tests and docs: everything else asks the registry or the modules,
 * so that adding a method never means hunting for its neighbours' keys, and one method's folder
 * never leans on another's key (besides the relationships a definition declares: the steps it
 * adds and passes with).
 *
 * Two ways a key is written in code are looked for: quoted as a string ('government_id'), and, for
 * the keys no English word shares (the ones with an underscore), as a property or an object key
 * (`methods.government_id`, `{ government_id: true }`) once the line's strings are set aside (a
 * description may name a method for the reader). The console's pages (app/) are held to the first
 * only: they read a Case's and a template's fields as the API answers them, per method.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const SOURCES = ['server', 'app', 'cli', 'processes'];
const METHODS_DIR = 'server/verification/methods/';

/** A method's own folder: its key with hyphens. */
const homeOf = (key: string) => `${METHODS_DIR}${key.replaceAll('_', '-')}/`;

/**
 * Lines where the same word is not a method's key, or names one on purpose: a validator's format,
 * the field-name guesses of the validation messages, the OpenAPI document's examples, whom a link
 * is mailed to, the claims an identity provider sends (its `email` claim), the nouns of not-found
 * messages (a passkey, the thing the API manages), and a definition's relationships.
 */
const NOT_A_METHOD = [
  /format === 'email'/,
  /^\s*names: \[/,
  /examples: \[/,
  /mailsLinkTo(:| ===)/,
  /EMAIL_CLAIM = 'email'/,
  /noun: '/,
  /^\s*(adds|passesWith): \[/,
];

/** The OpenAPI examples spread over lines: an example object's methods. */
const EXAMPLE_OBJECT = /^\s*verification_methods: \{ (\w+: true(, )?)+ \},?$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(tsx?|mjs)$/.test(name) && !/\.test\.tsx?$/.test(name) ? [full] : [];
  });
}

/** The line with its strings' contents and its comments set aside. */
function codeOf(line: string): string {
  if (/^\s*(\*|\/\/|\/\*)/.test(line)) return '';
  return line.replace(/'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"/g, "''").replace(/\/\/.*$/, '');
}

/** Every line of the sources that writes a method's key outside that method's folder. */
function keysAwayFromHome(files: Array<{ relative: string; text: string }>): string[] {
  const found: string[] = [];
  for (const key of VERIFICATION_METHODS) {
    const quoted = new RegExp(`'${key}'`);
    const asProperty = key.includes('_') ? new RegExp(`\\.${key}\\b|\\b${key}\\??:`) : null;
    for (const { relative, text } of files) {
      if (relative.startsWith(homeOf(key))) continue;
      const console = relative.startsWith('app/');
      text.split('\n').forEach((line, index) => {
        if (NOT_A_METHOD.some((allowed) => allowed.test(line)) || EXAMPLE_OBJECT.test(line)) return;
        if (quoted.test(line) || (!console && asProperty?.test(codeOf(line)))) {
          found.push(`${relative}:${index + 1}: ${line.trim()}`);
        }
      });
    }
  }
  return found;
}

describe('method keys', () => {
  it('appear only in their own folders', () => {
    const files = SOURCES.flatMap((source) =>
      sourceFiles(path.join(ROOT, source)).map((file) => ({
        relative: path.relative(ROOT, file),
        text: readFileSync(file, 'utf8'),
      })),
    );
    expect(keysAwayFromHome(files)).toEqual([]);
  });

  it('are found quoted, as a property and as an object key, in another method’s folder too', () => {
    const file = (relative: string, text: string) => ({ relative, text });
    expect(
      keysAwayFromHome([
        file('server/application/x.ts', "if (method === 'passkey') return;"),
        file('server/templates/y.ts', 'if (template.methods.government_id) return;'),
        file('cli/z.ts', 'const prices = { custom_question: 5 };'),
        file(`${homeOf('selfie')}step.ts`, "const other = stepOf(record, 'government_id');"),
        file(`${homeOf('selfie')}output.ts`, "  'A selfie matched against the ID (with `government_id`).',"),
        file(`${homeOf('passkey')}step.ts`, "const mine = stepOf(record, 'passkey');"),
        file(`${homeOf('selfie')}definition.ts`, "  passesWith: ['government_id'],"),
      ])
        .map((line) => line.split(':')[0])
        .sort(),
    ).toEqual(['cli/z.ts', 'server/application/x.ts', 'server/templates/y.ts', `${homeOf('selfie')}step.ts`]);
  });
});

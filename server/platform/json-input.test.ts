import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeJsonInputProblem, jsonInputProblem, MAX_JSON_DEPTH } from './json-input';
import { CONTROL_CHARACTER } from './storable-text';

const nested = (depth: number, leaf: unknown = 1) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
};

describe('jsonInputProblem', () => {
  it('walks 100,000 levels without overflowing the stack, refusing past 32', () => {
    expect(jsonInputProblem(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`))).toMatchObject({
      kind: 'too_deep',
    });
    expect(jsonInputProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonInputProblem(nested(MAX_JSON_DEPTH + 1))?.kind).toBe('too_deep');
    expect(describeJsonInputProblem({ kind: 'too_deep', path: [] })).toBe(
      'The JSON nests deeper than 32 levels.',
    );
  });

  it('names where a control character or a lone surrogate is, in a value or a key', () => {
    expect(jsonInputProblem({ a: [{ b: 'x\u0000' }] })).toEqual({
      kind: 'control_character',
      path: ['a', '0', 'b'],
      oneLine: false,
    });
    expect(jsonInputProblem({ custom_question_text: 'Q \ud800?' })).toEqual({
      kind: 'lone_surrogate',
      path: ['custom_question_text'],
    });
    expect(jsonInputProblem({ 'k\udc00': 1 })).toMatchObject({ kind: 'lone_surrogate', path: ['k\udc00'] });
    expect(describeJsonInputProblem({ kind: 'lone_surrogate', path: ['custom_question_text'] })).toBe(
      'custom_question_text: holds an unpaired UTF-16 surrogate (such as \\ud800 alone), which is not text.',
    );
    // A pair is a character, and notes may hold line breaks and tabs.
    expect(jsonInputProblem({ name: '😀', notes: 'line one\r\n\tline two' })).toBeNull();
  });

  it('one-line values (an identity provider’s parameters) hold no line break nor direction control either', () => {
    for (const text of [
      'a\nb',
      'a\rb',
      'a\tb',
      'evil\u202Egnp.exe',
      '\u2066x\u2069',
      'a\u200Fb',
      'a\u001bb',
      'a\u0007b',
      'a\u0085b',
      'a\u009bb',
      'a\u2028b',
      'a\u2029b',
      'a\u061cb',
    ]) {
      expect(jsonInputProblem({ login_hint: text }, { oneLine: true }), JSON.stringify(text)).toMatchObject({
        kind: 'control_character',
        path: ['login_hint'],
      });
    }
    expect(jsonInputProblem({ login_hint: 'ada@acme.test' }, { oneLine: true })).toBeNull();
    // Joiners belong to names (Persian, Hindi): they stay.
    expect(jsonInputProblem({ given_name: 'می\u200Cخواهم' }, { oneLine: true })).toBeNull();
  });

  it('refuses exactly the values holding a control character or a lone surrogate, at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }), (value) => {
        const strings = collectStrings(value);
        const problem = jsonInputProblem(value);
        if (strings.some((text) => CONTROL_CHARACTER.test(text))) return problem !== null;
        if (strings.some((text) => !text.isWellFormed())) return problem?.kind === 'lone_surrogate';
        return problem === null;
      }),
      { numRuns: 500 },
    );
  });
});

/** Every string in a JSON value, keys included. */
function collectStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(collectStrings);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [key, ...collectStrings(item)]);
  }
  return [];
}

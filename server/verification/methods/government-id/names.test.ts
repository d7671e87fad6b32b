import { describe, expect, it } from 'vitest';
import { comparableName, namesMatch } from './names';

const expected = (given: string, family: string, fuzzy = true) => ({ given, family, fuzzy });

describe('comparing the names an identity provider sent with the document’s', () => {
  it('ignores case, accents and surrounding or doubled spaces', () => {
    expect(comparableName('  ZOË   Ångström ')).toBe('zoe angstrom');
    expect(namesMatch(expected('Zoë', 'Ångström', false), { given: ' zoe', family: 'ANGSTROM ' })).toBe(true);
    expect(namesMatch(expected('José', 'Muñoz', false), { given: 'Jose', family: 'Munoz' })).toBe(true);
    // Letters whose accent no decomposition removes, and the punctuation names are spelt with or without.
    expect(namesMatch(expected('Lukasz', 'Strass', false), { given: 'Łukasz', family: 'Straß' })).toBe(true);
    expect(namesMatch(expected('Soren', 'Kjaer', false), { given: 'Søren', family: 'Kjær' })).toBe(true);
    expect(namesMatch(expected('Jean Luc', 'OBrien', false), { given: 'Jean-Luc', family: "O'Brien" })).toBe(
      false,
    );
    expect(namesMatch(expected('Jean Luc', 'O Brien', false), { given: 'Jean-Luc', family: 'O’Brien' })).toBe(
      true,
    );
  });

  it('with fuzzy, allows one edit up to 5 characters and two beyond; without, none', () => {
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Adda', family: 'Lovelace' })).toBe(true);
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Adaaa', family: 'Lovelace' })).toBe(false);
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Ada', family: 'Lovlase' })).toBe(true);
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Ada', family: 'Lovlas' })).toBe(false);
    expect(namesMatch(expected('Ada', 'Lovelace', false), { given: 'Adda', family: 'Lovelace' })).toBe(false);
  });

  it('needs both names to match, and never matches an empty name', () => {
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Grace', family: 'Lovelace' })).toBe(false);
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: 'Ada', family: 'Hopper' })).toBe(false);
    expect(namesMatch(expected('Ada', 'Lovelace'), { given: '', family: 'Lovelace' })).toBe(false);
  });

  it('compares names in other scripts as they are', () => {
    expect(namesMatch(expected('ليلى', 'الحسن'), { given: 'ليلى', family: 'الحسن' })).toBe(true);
    expect(namesMatch(expected('花子', '山田', false), { given: '花子', family: '山田' })).toBe(true);
    expect(namesMatch(expected('花子', '山田', false), { given: '花子', family: '田中' })).toBe(false);
  });
});

import { distance } from 'fastest-levenshtein';
import { stringSetting } from '@/server/verification/methods/output';
import { governmentIdMethod } from './definition';

/** A person's given and family names, as a document or an identity provider states them. */
export interface PersonNames {
  given: string;
  family: string;
}

/** The names a case expects the document to show (an identity provider sent them), and how strictly. */
export interface ExpectedNames extends PersonNames {
  /** Okta's `fuzzy`: a small edit distance is allowed besides case, diacritics and spacing (allowedEdits). */
  fuzzy: boolean;
}

/** Latin letters that carry their accent in their shape (no decomposition takes it off). */
const FOLDED: Record<string, string> = {
  ł: 'l',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ı: 'i',
  // Greek's final sigma: lower-casing a capital Σ gives ς or σ by its place in the word.
  ς: 'σ',
};

/**
 * Combining marks on a Latin, Greek or Cyrillic letter: diacritics, which documents and
 * directories spell with or without (Zoë, Zoe). Elsewhere a mark is a letter of its own (a
 * Devanagari vowel sign, a Thai tone mark, Arabic vowelling): "सीता" is not "सत".
 */
const DIACRITICS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu;

// The patterns that name non-ASCII letters are built from strings, not written as regular
// expression literals: the bundle spells a string's letters as escapes but keeps a literal's as
// they are, and one non-ASCII character makes V8 hold a whole bundle's source at two bytes a
// character (scripts/build-processes.mjs checks it).
const FOLDABLE_LETTERS = new RegExp(`[${Object.keys(FOLDED).join('')}]`, 'g');
/** The hyphens (-, ‐, ‑ and the en dash –), apostrophes (' and ’) and the dot names are spelt with. */
const NAME_PUNCTUATION = "-‐‑–'’.";
const PUNCTUATION = new RegExp(`[${NAME_PUNCTUATION}]`, 'g');
const SPACES_AND_PUNCTUATION = new RegExp(`[${NAME_PUNCTUATION}\\s]`, 'g');

/**
 * A name as compared: diacritics of Latin, Greek and Cyrillic letters and case dropped (ł, ø,
 * ß… folded too), hyphens, apostrophes and dots read as spaces (Jean-Luc, O'Brien, J. are spelt
 * both ways), spaces trimmed and collapsed; composed again, so each letter counts once.
 */
export function comparableName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(DIACRITICS, '$1')
    .toLocaleLowerCase('und')
    .replace(FOLDABLE_LETTERS, (letter) => FOLDED[letter] ?? letter)
    .replace(PUNCTUATION, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .normalize('NFC');
}

/**
 * Scripts in which one character is a syllable or a word: one edit turns a name into another
 * person's (王伟 and 李娜 differ by as many edits as they have characters), so never fuzzy.
 */
const LOGOGRAPHIC_OR_SYLLABIC =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}\p{Script=Yi}\p{Script=Ethiopic}\p{Script=Cherokee}\p{Script=Canadian_Aboriginal}]/u;

/**
 * The edits fuzzy allows a name of `letters` letters: none up to 3 (Li and Lu, Ana and Ina are
 * other people), one for 4 to 8, two beyond.
 */
export function allowedEdits(letters: number): number {
  if (letters <= 3) return 0;
  return letters <= 8 ? 1 : 2;
}

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * Letters as the name is written, for the allowance: its graphemes other than spaces and the
 * punctuation names are spelt with (ß is one letter here, though it compares as ss; a Devanagari
 * consonant with its vowel sign is one, so a short Hindi name is held to the short names' rule).
 */
function letterCount(name: string): number {
  return [...graphemes.segment(name.normalize('NFC').replace(SPACES_AND_PUNCTUATION, ''))].length;
}

/**
 * Whether one name matches: equal as compared, or, when fuzzy and neither is written in Han,
 * Kana or Hangul, within the edits the shorter one allows (allowedEdits).
 */
function nameMatches(expected: string, read: string, fuzzy: boolean): boolean {
  const a = comparableName(expected);
  const b = comparableName(read);
  if (a === '' || b === '') return false;
  if (a === b) return true;
  if (!fuzzy || LOGOGRAPHIC_OR_SYLLABIC.test(a) || LOGOGRAPHIC_OR_SYLLABIC.test(b)) return false;
  return distance(a, b) <= allowedEdits(Math.min(letterCount(expected), letterCount(read)));
}

/** Whether the document's names are the ones expected: both the given and the family name. */
export function namesMatch(expected: ExpectedNames, read: PersonNames): boolean {
  return (
    nameMatches(expected.given, read.given, expected.fuzzy) &&
    nameMatches(expected.family, read.family, expected.fuzzy)
  );
}

/**
 * Whether a document shows a name given as one string (a case's subject_name). With the document's
 * given and family names, the string is cut into the two at each space, in either order (a
 * Japanese or Hungarian record may put the family name first), and each part held to its own
 * allowance, as an identity provider's names are (fuzzy): "Ana Li" is not "Ana Lu", though the
 * whole strings differ by one letter in five. With only the name as the document reads it, word
 * by word.
 */
export function documentShowsName(
  expected: string,
  read: { name: string | null; names: PersonNames | null },
): boolean {
  const words = comparableName(expected).split(' ');
  const { names } = read;
  if (names) {
    for (let cut = 1; cut < words.length; cut++) {
      const first = words.slice(0, cut).join(' ');
      const rest = words.slice(cut).join(' ');
      const asGivenFamily = { given: first, family: rest, fuzzy: true };
      const asFamilyGiven = { given: rest, family: first, fuzzy: true };
      if (namesMatch(asGivenFamily, names) || namesMatch(asFamilyGiven, names)) return true;
    }
    // A one-word name (a mononym) against the document's whole name.
    if (words.length === 1) return nameMatches(expected, `${names.given} ${names.family}`, true);
    return false;
  }
  if (read.name === null) return false;
  const shown = comparableName(read.name).split(' ');
  return (
    shown.length === words.length && words.every((word, index) => nameMatches(word, shown[index] ?? '', true))
  );
}

/** The step settings a case starts with when an identity provider tells which names to expect. */
export function expectedNamesSettings(expected: ExpectedNames) {
  return {
    [governmentIdMethod.key]: {
      expected_given_name: expected.given,
      expected_family_name: expected.family,
      expected_fuzzy: expected.fuzzy,
    },
  };
}

/** The names a case's step expects, if any. */
export function expectedNamesOf(settings: Record<string, unknown> | null | undefined): ExpectedNames | null {
  const given = stringSetting(settings ?? null, 'expected_given_name');
  const family = stringSetting(settings ?? null, 'expected_family_name');
  if (given === null || family === null) return null;
  return { given, family, fuzzy: settings?.expected_fuzzy === true };
}

/** The document's names as the step kept them, if any. */
export function documentNamesOf(settings: Record<string, unknown> | null | undefined): PersonNames | null {
  const given = stringSetting(settings ?? null, 'document_given_name');
  const family = stringSetting(settings ?? null, 'document_family_name');
  return given === null || family === null ? null : { given, family };
}

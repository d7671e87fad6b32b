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
  /** Okta's `fuzzy`: a small edit distance is allowed besides case, accents and spacing. */
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
};

/**
 * A name as compared: accents and case dropped (ł, ø, ß… folded too), hyphens, apostrophes and
 * dots read as spaces (Jean-Luc, O'Brien, J. are spelt both ways), spaces trimmed and collapsed.
 */
export function comparableName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLocaleLowerCase('und')
    .replace(/[łøđðþßæœı]/g, (letter) => FOLDED[letter] ?? letter)
    .replace(/[-‐‑–'’.]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether one name matches: equal as compared, or within the edit distance fuzzy allows (1 up to 5 characters, 2 beyond). */
function nameMatches(expected: string, read: string, fuzzy: boolean): boolean {
  const a = comparableName(expected);
  const b = comparableName(read);
  if (a === b) return true;
  if (!fuzzy || a === '' || b === '') return false;
  return distance(a, b) <= ([...a].length <= 5 ? 1 : 2);
}

/** Whether the document's names are the ones expected: both the given and the family name. */
export function namesMatch(expected: ExpectedNames, read: PersonNames): boolean {
  return (
    nameMatches(expected.given, read.given, expected.fuzzy) &&
    nameMatches(expected.family, read.family, expected.fuzzy)
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

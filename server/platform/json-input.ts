import { CONTROL_CHARACTER } from './storable-text';

/**
 * How deep a request's JSON may nest. The deepest body we take (an identity provider's claims:
 * claims.id_token.verified_claims[0].claims.given_name.value) nests 7 levels; 32 leaves room, and
 * refuses the 30,000 nested brackets that overflowed the stack of a recursive walk.
 */
export const MAX_JSON_DEPTH = 32;

/** What is wrong with a request's JSON value, where (its path of keys and indexes). */
export type JsonInputProblem =
  | { kind: 'too_deep'; path: string[] }
  /** `oneLine`: line breaks and direction controls were refused too. */
  | { kind: 'control_character'; path: string[]; oneLine: boolean }
  | { kind: 'lone_surrogate'; path: string[] };

interface Visit {
  value: unknown;
  depth: number;
  parent: Visit | null;
  key: string | null;
}

function pathOf(visit: Visit): string[] {
  const path: string[] = [];
  for (let at: Visit | null = visit; at?.key != null; at = at.parent) path.unshift(at.key);
  return path;
}

/**
 * What a one-line value from an identity provider may not hold besides: any control character
 * (C0, C1, tab and line breaks), line and paragraph separators, and the invisible marks that
 * reorder how text reads (bidirectional controls), by which `login_hint` could show one name in
 * the API, webhooks, records and PDFs and mean another. Joiners stay: names need them.
 */
const LINE_OR_DIRECTION_CONTROL = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u;

function textProblem(text: string, oneLine: boolean): 'control_character' | 'lone_surrogate' | null {
  if (CONTROL_CHARACTER.test(text) || (oneLine && LINE_OR_DIRECTION_CONTROL.test(text))) {
    return 'control_character';
  }
  // A lone surrogate is no character: UTF-8 cannot encode it and PostgreSQL refuses it (22P02).
  if (!text.isWellFormed()) return 'lone_surrogate';
  return null;
}

function problemAt(
  kind: 'control_character' | 'lone_surrogate',
  path: string[],
  oneLine: boolean,
): JsonInputProblem {
  return kind === 'control_character' ? { kind, path, oneLine } : { kind, path };
}

/**
 * Something in a parsed JSON value (a request's body, query or console input) that the service
 * refuses, the first its walk meets: nesting deeper than `maxDepth`, or a string (or key) with a
 * control character (with `oneLine`, line breaks and direction controls too) or a lone
 * surrogate. Walked with a stack of its own, not by recursion, so no input can overflow the
 * process's stack.
 */
export function jsonInputProblem(
  value: unknown,
  options: { maxDepth?: number; oneLine?: boolean } = {},
): JsonInputProblem | null {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const oneLine = options.oneLine ?? false;
  const stack: Visit[] = [{ value, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value: current, depth } = visit;
    if (typeof current === 'string') {
      const kind = textProblem(current, oneLine);
      if (kind) return problemAt(kind, pathOf(visit), oneLine);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxDepth) return { kind: 'too_deep', path: pathOf(visit) };
    const entries = Array.isArray(current)
      ? current.map((item, index) => [String(index), item] as const)
      : Object.entries(current);
    // Pushed last to first, so the first child is looked at first.
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, item] = entries[i] as readonly [string, unknown];
      const child: Visit = { value: item, depth: depth + 1, parent: visit, key };
      const kind = Array.isArray(current) ? null : textProblem(key, oneLine);
      if (kind) return problemAt(kind, pathOf(child), oneLine);
      stack.push(child);
    }
  }
  return null;
}

/** A problem in words, naming where: `custom_question_text: …`. */
export function describeJsonInputProblem(problem: JsonInputProblem): string {
  const where = problem.path.length > 0 ? `${problem.path.join('.')}: ` : '';
  switch (problem.kind) {
    case 'too_deep':
      return `The JSON nests deeper than ${MAX_JSON_DEPTH} levels.`;
    case 'control_character':
      return problem.oneLine
        ? `${where}control characters (such as NUL), line breaks and direction overrides are not allowed.`
        : `${where}control characters (such as NUL) are not allowed.`;
    case 'lone_surrogate':
      return `${where}holds an unpaired UTF-16 surrogate (such as \\ud800 alone), which is not text.`;
  }
}

import { closest, distance } from 'fastest-levenshtein';
import { type ZodError, z } from 'zod';
import { VERIFICATION_METHODS } from '@/db/schema';
import { PAGE_SIZE } from '@/server/platform/pagination';

/**
 * What a client reads when its input fails its schema: words a person understands rather than
 * the validator's own ("Invalid input: expected string, received undefined"). The wording is set
 * here once, for every schema, through Zod's global error map (a schema's own message, where it
 * gives one, still wins), and the issues are joined into one `detail` line by describeZodError.
 */
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return 'required';
    if (issue.code === 'invalid_format' && issue.format === 'datetime') {
      return 'must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z or 2026-01-31T10:00:00+01:00';
    }
    return undefined;
  },
});

/** Names a client might try for a page size, which is fixed. */
const PAGE_SIZE_NAMES = new Set(['limit', 'page_size', 'per_page', 'size', 'count', 'page']);

/** "did you mean …?" for a near miss (at most two letters off), or nothing. */
function didYouMean(key: string, known: readonly string[]): string {
  const guess = closest(key, [...known]);
  return distance(key, guess) <= 2 ? ` (did you mean "${guess}"?)` : '';
}

function unknownKeyMessage(key: string, path: readonly PropertyKey[]): string {
  if (path.at(-1) === 'verification_methods') {
    return `unknown method "${key}"${didYouMean(key, VERIFICATION_METHODS)}; the methods are ${VERIFICATION_METHODS.join(', ')}`;
  }
  if (path.length === 0 && PAGE_SIZE_NAMES.has(key)) {
    return `unknown parameter "${key}": every page holds up to ${PAGE_SIZE} results, a fixed size; follow next_cursor for more`;
  }
  return `unknown field "${key}"`;
}

/** "verification_methods: unknown method "emial" (did you mean "email"?)…" — one part per problem, paths as sent. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .flatMap((issue) => {
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => `${where}${unknownKeyMessage(key, issue.path)}`);
      }
      return [`${where}${issue.message}`];
    })
    .join('; ');
}

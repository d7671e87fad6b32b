import { closest, distance } from 'fastest-levenshtein';
import { type ZodError, z } from 'zod';
import type { $ZodRawIssue } from 'zod/v4/core';
import { PAGE_SIZE } from '@/server/platform/pagination';

/**
 * What a client reads when its input fails its schema: what was wrong and what is accepted, in
 * words a person understands rather than the validator's own ("Invalid input: expected string,
 * received undefined"). The wording is set here once, for every issue a public input can raise,
 * through Zod's global error map (a schema's own message, where it gives one, still wins), and the
 * issues are joined into one `detail` line by describeZodError, one problem per field.
 */
z.config({ customError: plainMessage });

function plainMessage(issue: $ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'required';
      // A date or an address is more than "text": say which.
      const format = (issue.inst as { _zod?: { def?: { format?: string } } } | undefined)?._zod?.def?.format;
      const wanted = format
        ? formatMessage(format, {})
        : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
      return `${wanted}, not ${valueKind(issue.input)}`;
    }
    case 'invalid_value': {
      const accepted = `${issue.values.length === 1 ? '' : 'one of '}${issue.values.map(String).join(', ')}`;
      return issue.input === undefined ? `required: ${accepted}` : `must be ${accepted}${sent(issue.input)}`;
    }
    case 'invalid_format':
      return formatMessage(issue.format, issue as { prefix?: string });
    case 'too_small':
      return sizeMessage('at least', issue.origin, Number(issue.minimum));
    case 'too_big':
      return sizeMessage('at most', issue.origin, Number(issue.maximum));
    case 'unrecognized_keys':
      return unknownKeysMessage(issue.keys, issue.path ?? [], knownKeys(issue.inst));
    case 'invalid_union':
      return 'is not in a form this field accepts';
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'holds a value that is not accepted';
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    default:
      return undefined;
  }
}

/** A JSON type as a person names it; `record` and `object` are both an object to a client. */
const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
  null: 'null',
};

/** What a client sent, by its JSON kind (the value itself is theirs, and may be long). */
function valueKind(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'string') return 'text';
  if (typeof input === 'boolean') return String(input);
  if (typeof input === 'number') return 'a number';
  if (typeof input === 'object') return 'an object';
  return typeof input;
}

/** `, not "bogus"` for a refused text (cut short), `, not a number` for other kinds. */
function sent(input: unknown): string {
  if (typeof input !== 'string') return `, not ${valueKind(input)}`;
  return `, not "${input.length > 40 ? `${input.slice(0, 40)}…` : input}"`;
}

function formatMessage(format: string, issue: { prefix?: string }): string {
  if (format === 'datetime') {
    return 'must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z or 2026-01-31T10:00:00+01:00';
  }
  if (format === 'email') return 'must be an e-mail address, such as jane@acme.example';
  if (format === 'uuid') return 'must be a UUID, such as 0f8fad5b-d9cb-469f-a165-70867728950e';
  if (format === 'starts_with') return `must start with "${issue.prefix}"`;
  return `must be a valid ${format}`;
}

function sizeMessage(bound: 'at least' | 'at most', origin: string, size: number): string {
  if (origin === 'string') {
    if (bound === 'at least' && size === 1) return 'must not be empty';
    return `must be ${bound} ${size} character${size === 1 ? '' : 's'}`;
  }
  if (origin === 'array' || origin === 'set') {
    if (bound === 'at least' && size === 1) return 'must list at least one';
    return `must list ${bound} ${size}`;
  }
  return `must be ${bound} ${size}`;
}

/** The names an object (its fields) or a record with fixed keys (the methods) accepts. */
function knownKeys(schema: unknown): string[] {
  const def = (
    schema as { _zod?: { def?: { shape?: object; keyType?: { _zod?: { values?: Set<unknown> } } } } }
  )?._zod?.def;
  if (def?.shape) return Object.keys(def.shape);
  return [...(def?.keyType?._zod?.values ?? [])].map(String);
}

/** Names a client might try for a page size, which is fixed. */
const PAGE_SIZE_NAMES = new Set(['limit', 'page_size', 'per_page', 'size', 'count', 'page']);

/**
 * Where the value of a likely guess goes, for names too far from any field for "did you mean".
 * Each applies only where `field` is accepted, so a guess is answered in the context it was made.
 */
const GUESSES: Array<{ names: string[]; field: string; say: string }> = [
  {
    names: [
      'subject_phone',
      'phone',
      'phone_number',
      'subject_phone_number',
      'mobile',
      'mobile_number',
      'sms_phone',
      'sms_number',
      'telephone',
    ],
    field: 'verification_methods',
    say: 'the subject types their phone number on the verification page, so none is sent here; request "sms": true in verification_methods',
  },
  {
    names: ['email', 'subject', 'email_address', 'recipient', 'subject_mail'],
    field: 'subject_email',
    say: 'the subject’s e-mail address goes in subject_email',
  },
  {
    names: ['name', 'full_name', 'first_name', 'last_name', 'given_name', 'family_name'],
    field: 'subject_name',
    say: 'the subject’s name goes in subject_name, one field, optional',
  },
  {
    names: ['methods', 'verifications', 'checks', 'steps'],
    field: 'verification_methods',
    say: 'the methods to request go in verification_methods, an object such as {"email": true, "sms": true}',
  },
  {
    names: ['question', 'custom_question', 'security_question', 'answer'],
    field: 'custom_question_text',
    say: 'the question goes in custom_question_text and the answer to accept in custom_question_answer, with "custom_question": true in verification_methods',
  },
  {
    names: ['manager', 'approver', 'approver_email', 'supervisor', 'supervisor_email'],
    field: 'manager_email',
    say: 'the manager’s e-mail address goes in manager_email and their name in manager_name, with "manager": true in verification_methods',
  },
  {
    names: ['comment', 'comments', 'memo', 'description'],
    field: 'notes',
    say: 'text for your team goes in notes',
  },
  {
    names: ['from', 'since', 'after', 'start', 'created_from', 'created_since', 'created_at'],
    field: 'created_after',
    say: 'filter by creation time with created_after and created_before (ISO 8601 with a time zone)',
  },
  {
    names: ['until', 'before', 'end', 'created_until', 'created_to'],
    field: 'created_before',
    say: 'filter by creation time with created_after and created_before (ISO 8601 with a time zone)',
  },
  {
    names: ['offset', 'starting_after', 'ending_before', 'next', 'previous', 'page_token'],
    field: 'cursor',
    say: 'pages are followed through the next and previous URLs each page gives (their cursor parameter)',
  },
  {
    names: ['event_types', 'enabled_events', 'types', 'event', 'subscriptions', 'topics'],
    field: 'events',
    say: 'the event types go in events, a list such as ["case.closed", "case.failed"]',
  },
  {
    names: ['endpoint', 'endpoint_url', 'webhook_url', 'uri', 'target'],
    field: 'url',
    say: 'the HTTPS address to deliver to goes in url',
  },
  {
    names: ['secret', 'signing_secret'],
    field: 'url',
    say: 'Vouch makes the signing secret and returns it once, from create and rotate-secret; it cannot be set',
  },
  {
    names: ['enabled', 'active', 'disabled', 'status'],
    field: 'is_active',
    say: 'switch an endpoint on or off with is_active: true or false',
  },
  {
    names: ['step', 'verification_method'],
    field: 'method',
    say: 'the step to complete or fail goes in method',
  },
  { names: ['reason'], field: 'failure_reason', say: 'why the step failed goes in failure_reason' },
  {
    names: ['status', 'outcome', 'result'],
    field: 'action',
    say: 'say what happens with action: complete_step or fail_step (with a method), or expire',
  },
  {
    names: ['event', 'event_type', 'types'],
    field: 'type',
    say: 'filter by event type with type, such as case.closed',
  },
  { names: ['case', 'case_uuid'], field: 'case_id', say: 'filter by case with case_id, the case’s id' },
  { names: ['endpoint', 'webhook_id'], field: 'endpoint_id', say: 'filter by endpoint with endpoint_id' },
  {
    names: ['type', 'event'],
    field: 'event_type',
    say: 'filter by event type with event_type, such as case.closed',
  },
];

/** Lower case without separators, so `subjectEmail` and `subject-email` meet `subject_email`. */
const bare = (name: string) => name.toLowerCase().replace(/[_\-\s]/g, '');

/** The accepted name `key` most likely misspells (at most two letters off), if any. */
function nearest(key: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const guess = closest(bare(key), known.map(bare));
  const index = known.map(bare).indexOf(guess);
  return distance(bare(key), guess) <= 2 ? (known[index] ?? null) : null;
}

/**
 * Unknown keys, each once: a near miss names the field meant, a likely guess says where its value
 * goes, and otherwise the accepted names are listed (once, at the end). The methods of
 * `verification_methods` speak of methods; the path parameter `id` is no field a client sends.
 */
function unknownKeysMessage(keys: string[], path: readonly PropertyKey[], known: string[]): string {
  const isMethods = path.at(-1) === 'verification_methods';
  const accepted = known.filter((name) => name !== 'id');
  // A list's input is its query string, whose names are parameters.
  const isQuery = path.length === 0 && accepted.includes('cursor');
  const noun = isMethods ? 'method' : isQuery ? 'parameter' : path.length === 0 ? 'field' : 'key';
  const parts: string[] = [];
  const unexplained: string[] = [];
  for (const key of keys) {
    if (isQuery && PAGE_SIZE_NAMES.has(key)) {
      parts.push(
        `unknown parameter "${key}": every page holds up to ${PAGE_SIZE} results, a fixed size; follow the page’s next link for more`,
      );
      continue;
    }
    const guess = nearest(key, accepted);
    if (guess) {
      parts.push(`unknown ${noun} "${key}" (did you mean "${guess}"?)`);
      continue;
    }
    const hint = GUESSES.find((g) => g.names.includes(key.toLowerCase()) && accepted.includes(g.field));
    if (hint) parts.push(`unknown ${noun} "${key}": ${hint.say}`);
    else unexplained.push(key);
  }
  if (unexplained.length > 0) {
    parts.push(
      `unknown ${noun}${unexplained.length > 1 ? 's' : ''} ${unexplained.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  if (parts.length > 0 && (isMethods || unexplained.length > 0) && accepted.length > 0) {
    parts[parts.length - 1] += `; the ${noun}s are ${accepted.join(', ')}`;
  }
  return parts.join('; ');
}

/**
 * The detail for a JSON body that is not an object (a list, a text, a number…): every operation
 * takes an object, and the validator would otherwise see the list's items as fields "0", "1"….
 */
export function bodyNotAnObjectMessage(body: unknown): string | null {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return null;
  return `The request body must be a JSON object, such as {"subject_email": "jane@acme.example"}, not ${valueKind(body)}.`;
}

/** A path as a client wrote it: `verification_methods.email`, `methods[0]`. */
function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, part) =>
      typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part),
    '',
  );
}

/** Which of several problems with one value is worth saying: its type, then a rule of ours. */
function weight(issue: ZodError['issues'][number]): number {
  if (issue.code === 'invalid_type') return 0;
  if (issue.code === 'custom') return 1;
  return 2;
}

/**
 * "verification_methods: unknown method "emial" (did you mean "email"?)…" — one part per field,
 * paths as sent. Each value's problem is said once: a wrong type says everything (that an empty
 * list is also "too short" would only repeat it), a rule of ours (a field only a method takes)
 * says more than its format, and otherwise the first problem found. Unknown keys are reported
 * beside the problems of their object.
 */
export function describeZodError(error: ZodError): string {
  const chosen = new Map<string, ZodError['issues'][number]>();
  const parts: Array<ZodError['issues'][number]> = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      parts.push(issue);
      continue;
    }
    const where = pathText(issue.path);
    const current = chosen.get(where);
    if (!current) {
      chosen.set(where, issue);
      parts.push(issue);
    } else if (weight(issue) < weight(current)) {
      chosen.set(where, issue);
      parts[parts.indexOf(current)] = issue;
    }
  }
  return parts
    .map((issue) => {
      const where = pathText(issue.path);
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

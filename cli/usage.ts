import { parseArgs } from 'node:util';

/**
 * The operator CLI's commands as its user sees them (names, options, usage) and the reading of
 * its arguments. Nothing here loads the database or the service's code, so help is instant and
 * works without a database; cli/commands.ts runs a command.
 */
const INVOCATION = 'npm run --silent cli --';

interface CommandSpec {
  /** Its options as the usage shows them. */
  synopsis: string;
  /** What it does and prints. */
  description: string;
  /** The options it takes, each with a value. */
  options: readonly string[];
}

export const TEAM_UPDATE_FLAGS = [
  'plan',
  'subscription-status',
  'topup-cents',
  'trial-ends-at',
  'retention-days',
  'rate-limit-read',
  'rate-limit-write',
] as const;

export const COMMANDS = {
  'teams create': {
    synopsis: '--name NAME --admin-email EMAIL [--plan PLAN]',
    description:
      'Creates a team (on the trial plan unless --plan names another), its owner with a one-time console\n' +
      'password, a live and a test API key. Prints them with the console URL.',
    options: ['name', 'admin-email', 'plan'],
  },
  'teams update': {
    synopsis:
      '--team TEAM_ID [--plan PLAN] [--subscription-status S] [--topup-cents N] [--trial-ends-at ISO] [--retention-days N|none] [--rate-limit-read N|default] [--rate-limit-write N|default]',
    description:
      "Changes a team's plan, subscription status, top-up balance (cents), trial end, case retention\n" +
      '(ended cases older than N days are redacted; none keeps them), or its API budgets: read and write\n' +
      'requests a minute (default: the configured RATE_LIMIT_READ/WRITE_PER_MINUTE). Give at least one.',
    options: ['team', ...TEAM_UPDATE_FLAGS],
  },
  'keys create': {
    synopsis: '--team TEAM_ID [--name NAME] [--mode live|test]',
    description: 'Makes another API key for a team (live unless --mode test) and prints it once.',
    options: ['team', 'name', 'mode'],
  },
  'keys revoke': {
    synopsis: '--key KEY_ID',
    description: "Revokes an API key (its id, as keys create printed it): the key's next request gets 401.",
    options: ['key'],
  },
  'keys signing-rotate': {
    synopsis: '[--alg EdDSA|RS256]',
    description:
      'Makes a new signing key current (EdDSA, which signs evidence records, unless --alg RS256, which signs\n' +
      'ID tokens). The key before it is retired but stays published in /.well-known/jwks.json for\n' +
      'AUDIT_RETENTION_DAYS, so what it signed keeps verifying. Needs SIGNING_KEY_SECRET as the service has it.',
    options: ['alg'],
  },
  'audit verify': {
    synopsis: '[--team TEAM_ID]',
    description:
      'Checks the tamper-evident audit chain of one team (or every team): each sealed entry in its place,\n' +
      "naming its predecessor's hash, hashing to what it states, its row unchanged since it was sealed\n" +
      "(redaction's placeholders aside). Prints what it checked; exits 1 naming the first broken entry.",
    options: ['team'],
  },
  'db migrate': {
    synopsis: '',
    description: 'Applies the database migrations (every process of the service also does at start).',
    options: [],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
export type Values = Record<string, string | undefined>;

const NAMES = Object.keys(COMMANDS) as CommandName[];

/** A mistake in the arguments: said with a usage, the command's when one was named. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string = fullUsage(),
  ) {
    super(message);
  }
}

/** A command's entry in a list: its name and options, then what it does. */
function entry(name: CommandName): string {
  const { synopsis, description } = COMMANDS[name];
  return `  ${[name, synopsis].filter(Boolean).join(' ')}\n${description.replace(/^/gm, '    ')}`;
}

export function commandUsage(name: CommandName): string {
  const { synopsis, description } = COMMANDS[name];
  return `usage: ${[INVOCATION, name, synopsis].filter(Boolean).join(' ')}\n\n${description}`;
}

/** The usage of every command under `prefix` (all of them for ''). */
function groupUsage(prefix: string): string {
  const names = NAMES.filter((name) => prefix === '' || name.startsWith(`${prefix} `));
  const head = [INVOCATION, prefix, '<command> [options]'].filter(Boolean).join(' ');
  return `usage: ${head}\n\ncommands:\n${names.map(entry).join('\n')}`;
}

function fullUsage(): string {
  return (
    `${groupUsage('')}\n\n` +
    '"help COMMAND" or "COMMAND --help" shows one command. A command\'s last line of output is one JSON\n' +
    'object; errors go to stderr with exit code 1. It works on the database in DATABASE_URL, or the\n' +
    "embedded one under .data/ (the running service's, when it runs). BASE_URL sets the URL printed\n" +
    'in links; unset, it is the one the service last started with.'
  );
}

function isGroup(prefix: string): boolean {
  return NAMES.some((name) => name.startsWith(`${prefix} `));
}

export type Invocation = { help: string } | { name: CommandName; values: Values };

/**
 * What the arguments ask for: a usage to print (`help`, `--help` or `-h` anywhere), or a command
 * with its options, checked. Throws a UsageError for anything else.
 */
export function parseInvocation(argv: string[]): Invocation {
  const firstOption = argv.findIndex((arg) => arg.startsWith('-'));
  const words = firstOption === -1 ? argv : argv.slice(0, firstOption);
  const rest = firstOption === -1 ? [] : argv.slice(firstOption);
  const wantsHelp = words.includes('help') || rest.includes('--help') || rest.includes('-h');
  const named = words.filter((word) => word !== 'help');
  const name = NAMES.find((candidate) => candidate.split(' ').every((word, i) => named[i] === word));

  if (!name) {
    const asked = named.join(' ');
    if (wantsHelp && asked === '') return { help: fullUsage() };
    if (isGroup(asked)) {
      if (wantsHelp) return { help: groupUsage(asked) };
      throw new UsageError(`"${asked}" needs a command`, groupUsage(asked));
    }
    throw new UsageError(asked === '' ? 'no command given' : `unknown command "${asked}"`);
  }
  const usage = commandUsage(name);
  if (wantsHelp) return { help: usage };
  const accepted: readonly string[] = COMMANDS[name].options;
  const options = Object.fromEntries(accepted.map((option) => [option, { type: 'string' as const }]));
  // Unknown options and stray words said in our words, with the command's usage, rather than in
  // the parser's (which suggests putting an unknown option after `--`).
  const { tokens } = parseArgs({
    args: [...named.slice(name.split(' ').length), ...rest],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === 'option' && !accepted.includes(token.name)) {
      throw new UsageError(`unknown option ${token.rawName} for "${name}"`, usage);
    }
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}"`, usage);
  }
  try {
    return { name, values: parseArgs({ args: rest, options, strict: true }).values as Values };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usage);
  }
}

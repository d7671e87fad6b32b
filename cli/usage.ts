import { parseArgs } from 'node:util';
import { plansHelp } from './plans-help';

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
  /** Its options that may be given more than once (read as `lists[option]`). */
  repeatable?: readonly string[];
  /** The one argument it takes besides its options (read as `values.file`), if any. */
  operand?: 'file';
  /** It works on files alone: no database is opened (nor migrated). */
  offline?: true;
  /** What its own usage shows after the description (not a list of commands), its prose wrapped by `wrap`. */
  details?: (wrap: (text: string) => string) => string;
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
      'Creates a team (on the trial plan unless --plan names another), its owner with a one-time console ' +
      'password, a live and a test API key. Prints them with the console URL.',
    options: ['name', 'admin-email', 'plan'],
    details: plansHelp,
  },
  'teams list': {
    synopsis: '[--name TEXT]',
    description:
      'Lists the teams, oldest first (with --name, those whose name contains TEXT, in any case): each ' +
      "team's team_id (what --team takes), name, plan, subscription status, trial end and creation time.",
    options: ['name'],
  },
  'teams update': {
    synopsis:
      '--team TEAM_ID [--plan PLAN] [--subscription-status S] [--topup-cents N] [--trial-ends-at ISO] [--retention-days N|none] [--rate-limit-read N|default] [--rate-limit-write N|default]',
    description:
      "Changes a team's plan, subscription status, top-up balance (cents), trial end, case retention " +
      '(ended cases older than N days are redacted; none keeps them), or its API budgets: read and write ' +
      'requests a minute (default: the configured RATE_LIMIT_READ/WRITE_PER_MINUTE). Give at least one. ' +
      'TEAM_ID is as teams list shows it.',
    options: ['team', ...TEAM_UPDATE_FLAGS],
    details: plansHelp,
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
      'Makes a new signing key current (EdDSA, which signs evidence records, unless --alg RS256, which signs ' +
      'ID tokens). The key before it is retired but stays published in /.well-known/jwks.json, so what it ' +
      'signed keeps verifying: an evidence key for AUDIT_RETENTION_DAYS, an ID-token key for 15 minutes ' +
      '(a token lives 5). Needs KEYS_SECRET as the service has it.',
    options: ['alg'],
  },
  'keys signing-revoke': {
    synopsis: '--kid KID [--reason TEXT]',
    description:
      'Revokes a signing key at once (one thought compromised): it leaves /.well-known/jwks.json, which names ' +
      'it among the revoked so records it signed fail saying so; a current key is replaced at the next ' +
      'signature; each team it signed for is told in its audit log, and audit checkpoints it signed are ' +
      'signed again with the current key. Needs KEYS_SECRET as the service has it.',
    options: ['kid', 'reason'],
  },
  'audit verify': {
    synopsis: '[--team TEAM_ID]',
    description:
      'Checks the tamper-evident audit chain of one team (or every team): each sealed entry in its place, ' +
      "naming its predecessor's hash, hashing to what it states, its row unchanged since it was sealed " +
      "(redaction's placeholders aside). Prints what it checked; exits 1 naming the first broken entry.",
    options: ['team'],
  },
  'evidence verify': {
    synopsis: 'FILE --jwks FILE|URL',
    description:
      'Verifies an evidence record offline: FILE is the signed JSON (GET /v1/cases/{id}/evidence/) or the ' +
      "console's PDF (its attached record is read; the PDF prints this command with its file and its " +
      "issuer's key set). Checks the JWS against the key set --jwks names (a JWKS file, or the URL " +
      'https://SERVICE/.well-known/jwks.json of the service you trust; without --jwks, that of the service ' +
      "BASE_URL names, for its own records only), the key, the payload's form and each audit entry's hash " +
      'against its content and stated predecessor. Prints what the record proves and exits 0, or exits 1 ' +
      'naming what failed. Needs no database. Under npm run, a relative FILE is read from the folder you ' +
      'ran it from.',
    options: ['jwks'],
    operand: 'file',
    offline: true,
  },
  'oidc-clients create': {
    synopsis:
      '--team TEAM_ID --name NAME --redirect-uri URL [--redirect-uri URL…] [--mode test|live] [--template NAME]',
    description:
      "Registers an identity provider (Okta, any OIDC relying party) as a client of the service's OpenID " +
      'provider for a team: its exact redirect URIs (https; http only to a loopback host, for a test-mode ' +
      'client), its mode (test unless --mode live: the cases its flows open) and its default template. ' +
      'Prints `client_id` and `client_secret` (shown once, kept hashed). Audited as the operator.',
    options: ['team', 'name', 'redirect-uri', 'mode', 'template'],
    repeatable: ['redirect-uri'],
  },
  'oidc-clients list': {
    synopsis: '--team TEAM_ID',
    description: "Lists a team's identity-provider clients (never their secrets).",
    options: ['team'],
  },
  'oidc-clients rotate-secret': {
    synopsis: '--client CLIENT_ID [--grace-seconds N]',
    description:
      'Gives a client a new secret, printed once; the one it replaces keeps working for N seconds (default 0, ' +
      'at most 30 days), while the identity provider is given the new one. Audited as the operator.',
    options: ['client', 'grace-seconds'],
  },
  'oidc-clients delete': {
    synopsis: '--client CLIENT_ID',
    description: 'Removes a client: its flows are refused from then on. Audited as the operator.',
    options: ['client'],
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

/** How wide help is: every line, indentation included, in a terminal of 100 columns. */
export const HELP_WIDTH = 100;

/**
 * `units` laid out in lines of at most HELP_WIDTH characters, the first after `indent`, the others
 * after `hanging`: each line takes every unit that fits (one alone when it is longer).
 */
function fill(units: string[], indent: string, hanging: string): string {
  const lines: string[] = [];
  let line = '';
  for (const unit of units) {
    const prefix = lines.length === 0 ? indent : hanging;
    if (line !== '' && prefix.length + line.length + 1 + unit.length > HELP_WIDTH) {
      lines.push(prefix + line);
      line = unit;
    } else {
      line = line === '' ? unit : `${line} ${unit}`;
    }
  }
  lines.push((lines.length === 0 ? indent : hanging) + line);
  return lines.join('\n');
}

/** Prose wrapped at its spaces (the descriptions are written as one line each: help wraps them). */
function prose(text: string, indent = ''): string {
  return fill(text.split(' '), indent, indent);
}

/**
 * A command with its options, wrapped between options (an option stays with its value, a bracket
 * with what it holds), its continuation lines indented deeper than any description.
 */
function synopsisLines(words: string, indent: string): string {
  return fill(words.match(/\[[^\]]*\]|--[\w-]+ (?![-[])\S+|\S+/g) ?? [], indent, ' '.repeat(6));
}

/** A command's entry in a list: its name and options, then what it does. */
function entry(name: CommandName): string {
  const { synopsis, description } = COMMANDS[name];
  return `${synopsisLines([name, synopsis].filter(Boolean).join(' '), '  ')}\n${prose(description, '    ')}`;
}

export function commandUsage(name: CommandName): string {
  const { synopsis, description, details }: CommandSpec = COMMANDS[name];
  const usage = `${synopsisLines(['usage:', INVOCATION, name, synopsis].filter(Boolean).join(' '), '')}\n\n${prose(description)}`;
  return details ? `${usage}\n\n${details((text) => prose(text))}` : usage;
}

/** The usage of every command under `prefix` (all of them for ''). */
function groupUsage(prefix: string): string {
  const names = NAMES.filter((name) => prefix === '' || name.startsWith(`${prefix} `));
  const head = [INVOCATION, prefix, '<command> [options]'].filter(Boolean).join(' ');
  return `usage: ${head}\n\ncommands:\n${names.map(entry).join('\n')}`;
}

function fullUsage(): string {
  return `${groupUsage('')}\n\n${prose(
    '"help COMMAND" or "COMMAND --help" shows one command. A command\'s last line of output is one JSON ' +
      'object; errors go to stderr with exit code 1. It works on the database in DATABASE_URL, or the ' +
      "embedded one under .data/ (the running service's, when it runs). BASE_URL sets the URL printed " +
      'in links; unset, it is the one the service last started with.',
  )}`;
}

function isGroup(prefix: string): boolean {
  return NAMES.some((name) => name.startsWith(`${prefix} `));
}

/** Each repeatable option's values, in order (empty when not given). */
export type Lists = Record<string, string[]>;

export type Invocation = { help: string } | { name: CommandName; values: Values; lists: Lists };

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
  const repeatable: readonly string[] = (COMMANDS[name] as CommandSpec).repeatable ?? [];
  const options = Object.fromEntries(
    accepted.map((option) => [option, { type: 'string' as const, multiple: repeatable.includes(option) }]),
  );
  // Unknown options and stray words said in our words, with the command's usage, rather than in
  // the parser's (which suggests putting an unknown option after `--`).
  const { tokens } = parseArgs({
    args: [...named.slice(name.split(' ').length), ...rest],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const spec: CommandSpec = COMMANDS[name];
  const operands: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option' && !accepted.includes(token.name)) {
      throw new UsageError(`unknown option ${token.rawName} for "${name}"`, usage);
    }
    if (token.kind === 'positional') {
      if (!spec.operand || operands.length > 0) {
        throw new UsageError(`unexpected argument "${token.value}"`, usage);
      }
      operands.push(token.value);
    }
  }
  if (spec.operand && operands.length === 0) {
    throw new UsageError(`${spec.operand.toUpperCase()} is required`, usage);
  }
  try {
    const { values } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
    const single = Object.fromEntries(
      Object.entries(values).filter(([option]) => !repeatable.includes(option)),
    ) as Values;
    const lists = Object.fromEntries(
      repeatable.map((option) => [option, (values as Record<string, string[] | undefined>)[option] ?? []]),
    );
    return { name, values: { ...single, ...(spec.operand ? { [spec.operand]: operands[0] } : {}) }, lists };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usage);
  }
}

/** The commands that work on files alone (no database), and the others. */
export type OfflineCommandName = {
  [K in CommandName]: (typeof COMMANDS)[K] extends { offline: true } ? K : never;
}[CommandName];
export type DatabaseCommandName = Exclude<CommandName, OfflineCommandName>;

export function isOffline(name: CommandName): name is OfflineCommandName {
  const spec: CommandSpec = COMMANDS[name];
  return spec.offline === true;
}

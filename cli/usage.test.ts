import { describe, expect, it } from 'vitest';
import { COMMANDS, type CommandName, HELP_WIDTH, parseInvocation } from './usage';

/** The help text `args` print. */
function help(args: string[]): string {
  const invocation = parseInvocation(args);
  if (!('help' in invocation)) throw new Error(`${args.join(' ')} is no help`);
  return invocation.help;
}

const NAMES = Object.keys(COMMANDS) as CommandName[];
/** Every help there is: the whole list, each group's, each command's. */
const HELPS = [
  ['--help'],
  ...[...new Set(NAMES.map((name) => name.split(' ')[0] ?? ''))].map((group) => [group, '--help']),
  ...NAMES.map((name) => [...name.split(' '), '--help']),
];

describe('the operator CLI’s help', () => {
  it('fits a terminal of HELP_WIDTH columns: no line is longer', () => {
    for (const args of HELPS) {
      const long = help(args)
        .split('\n')
        .filter((line) => line.length > HELP_WIDTH);
      expect(long, args.join(' ')).toEqual([]);
    }
  });

  it('wraps prose where the line is full, never earlier: no line whose next word would have fitted on it', () => {
    const early: string[] = [];
    for (const args of HELPS) {
      const lines = help(args).split('\n');
      lines.forEach((line, i) => {
        const next = lines[i + 1] ?? '';
        const indent = /^ */.exec(line)?.[0].length ?? 0;
        // Within a paragraph of prose (a description, the closing notes): the same indentation,
        // other than a command's line (2) and its options' continuation (6).
        if (line.trim() === '' || next.trim() === '' || [2, 6].includes(indent)) return;
        if ((/^ */.exec(next)?.[0].length ?? 0) !== indent) return;
        const word = next.trim().split(' ')[0] ?? '';
        if (line.length + 1 + word.length <= HELP_WIDTH) early.push(`${args.join(' ')}: "${line}"`);
      });
    }
    expect(early).toEqual([]);
  });

  it('keeps an option with its value and a bracket whole when it wraps a command’s options', () => {
    const lines = help(['teams', '--help']).split('\n');
    const update = lines.findIndex((line) => line.startsWith('  teams update '));
    const options = [lines[update], lines[update + 1], lines[update + 2]].join(' ');
    for (const piece of ['--team TEAM_ID', '[--trial-ends-at ISO]', '[--rate-limit-write N|default]']) {
      expect(options).toContain(piece);
    }
    expect(lines[update + 1]).toMatch(/^ {6}\[/);
  });

  it('shows evidence verify with the key set it needs, as the evidence PDF prints it', () => {
    expect(help(['evidence', 'verify', '--help']).split('\n')[0]).toBe(
      'usage: npm run --silent cli -- evidence verify FILE --jwks FILE|URL',
    );
  });
});

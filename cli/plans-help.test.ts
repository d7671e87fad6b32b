import { describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema/values';
import { SEEDED_PLANS, seededTopupCents } from './plans-help';
import { parseInvocation } from './usage';

/** The help text `args` print. */
function help(args: string[]): string {
  const invocation = parseInvocation(args);
  if (!('help' in invocation)) throw new Error(`${args.join(' ')} is no help`);
  return invocation.help;
}

describe('the help of the commands that take --plan', () => {
  it('lists each plan with what it includes, and the top-up prices', () => {
    for (const command of [
      ['teams', 'update', '--help'],
      ['teams', 'create', '--help'],
    ]) {
      const text = help(command);
      for (const plan of SEEDED_PLANS) {
        expect(text).toMatch(
          new RegExp(`^  ${plan.code} +${plan.includedUnits.toLocaleString('en')} units of each method`, 'm'),
        );
      }
      expect(text).toMatch(/^ {2}trial +50 units of each method per billing period, for 14 days/m);
      expect(text.replaceAll('\n', ' ')).toContain(
        `in cents per unit: ${Object.entries(seededTopupCents())
          .map(([method, cents]) => `${method} ${cents}`)
          .join(', ')}.`,
      );
    }
  });

  it('reads every method’s seeded price from the migrations, a later insert after an earlier one', () => {
    expect(Object.keys(seededTopupCents()).sort()).toEqual([...VERIFICATION_METHODS].sort());
    expect(seededTopupCents()).toMatchObject({ email: 10, government_id: 150, passkey: 10 });
  });

  it('keeps the lists of several commands short: the plans are in the commands’ own help only', () => {
    expect(help(['teams', '--help'])).not.toContain('units of each method');
    expect(help(['--help'])).not.toContain('units of each method');
  });

  it('offers teams list, which finds the id the other commands take', () => {
    expect(help(['teams', 'list', '--help']).split('\n')[0]).toBe(
      'usage: npm run --silent cli -- teams list [--name TEXT]',
    );
    expect(parseInvocation(['teams', 'list', '--name', 'acme'])).toEqual({
      name: 'teams list',
      values: { name: 'acme' },
      lists: {},
    });
  });
});

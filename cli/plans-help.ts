import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The plan catalogue as the seed migration writes it (db/migrations/0001_seed-plans.sql), for the
 * help of the commands that take --plan. Help never opens a database, so it states the seed, and
 * says that an operator may have edited the catalogue since; test/domain/operator-cli.test.ts
 * holds these to the migrated database's rows. Nothing here loads the service's code (cli/usage.ts
 * imports it).
 */
export const SEEDED_PLANS = [
  { code: 'trial', name: 'Trial', includedUnits: 50, trialDays: 14 },
  { code: 'starter', name: 'Starter', includedUnits: 500, trialDays: null },
  { code: 'growth', name: 'Growth', includedUnits: 5_000, trialDays: null },
  { code: 'enterprise', name: 'Enterprise', includedUnits: 100_000, trialDays: null },
] as const;

/**
 * Cents per unit of each method once the plan's units of it are used, as the migrations seed them:
 * read from their `INSERT INTO "method_prices"` statements, in the migrations' order, so a method's
 * price is stated where its migration adds it and nowhere else.
 */
export function seededTopupCents(
  folder = path.resolve(process.cwd(), 'db/migrations'),
): Record<string, number> {
  const prices: Record<string, number> = {};
  let files: string[];
  try {
    files = readdirSync(folder);
  } catch {
    return prices; // not beside the migrations: the help names no price rather than fail
  }
  for (const file of files.filter((name) => name.endsWith('.sql')).sort()) {
    for (const statement of readFileSync(path.join(folder, file), 'utf8').split('--> statement-breakpoint')) {
      const insert = /INSERT INTO "method_prices"[^;]*/i.exec(statement)?.[0];
      if (!insert) continue;
      for (const [, method, cents] of insert.matchAll(/\('([a-z_]+)',\s*(\d+)\)/g)) {
        prices[method as string] = Number(cents);
      }
    }
  }
  return prices;
}

/**
 * What each plan includes and what a unit past it costs: a line per plan, then `wrap`'s prose
 * (the help's own wrapping) for the rules.
 */
export function plansHelp(wrap: (text: string) => string): string {
  const width = Math.max(...SEEDED_PLANS.map((plan) => plan.code.length));
  const plans = SEEDED_PLANS.map((plan) => {
    const trial = plan.trialDays === null ? '' : `, for ${plan.trialDays} days (the team starts trialing)`;
    return `  ${plan.code.padEnd(width)}  ${plan.includedUnits.toLocaleString('en')} units of each method per billing period${trial}`;
  });
  const seeded = Object.entries(seededTopupCents());
  const prices =
    seeded.length > 0
      ? `: ${seeded.map(([method, cents]) => `${method} ${cents}`).join(', ')}`
      : ' (the method_prices table)';
  return [
    'Plans, as seeded (an operator may have changed them since: the plans and method_prices tables):',
    ...plans,
    '',
    wrap(
      `Each case uses one unit of each method it requests (a government ID check adds a selfie). Past a plan's units of a method, a unit is paid from the top-up balance (--topup-cents), in cents per unit${prices}. A case that cannot be paid is refused (INSUFFICIENT_ALLOWANCE); a trial past its end, or a canceled subscription, refuses every case (TRIAL_EXPIRED).`,
    ),
  ].join('\n');
}

import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';

/**
 * The plan catalogue. Operators edit rows here (prices and allowances change without a release);
 * `included_units` is what each verification method gets per billing period on the plan.
 */
export const plans = pgTable('plans', {
  code: text('code').primaryKey(),
  name: text('name').notNull(),
  includedUnits: integer('included_units').notNull(),
  /** Length of the trial in days for trial plans; null for paid plans. */
  trialDays: integer('trial_days'),
  createdAt: createdAt(),
});

/** Price of one unit of a method bought from the top-up balance once the allowance is spent. */
export const methodPrices = pgTable('method_prices', {
  method: text('method').primaryKey(),
  topupPriceCents: integer('topup_price_cents').notNull(),
});

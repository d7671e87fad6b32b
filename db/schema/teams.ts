import { sql } from 'drizzle-orm';
import { bigint, check, customType, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { plans } from './billing';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { type Locale, oneOf, SUBSCRIPTION_STATUSES, type SubscriptionStatus } from './values';

export const teams = pgTable(
  'teams',
  {
    id: primaryUuid(),
    name: text('name').notNull(),
    planCode: text('plan_code')
      .notNull()
      .references(() => plans.code),
    subscriptionStatus: text('subscription_status').$type<SubscriptionStatus>().notNull(),
    /** End of the trial for teams on a trial plan; null otherwise. */
    trialEndsAt: timestamptz('trial_ends_at'),
    topupBalanceCents: bigint('topup_balance_cents', { mode: 'number' }).notNull().default(0),
    /** Billing periods are monthly from this instant (UTC). */
    billingAnchor: timestamptz('billing_anchor').notNull().defaultNow(),
    /** Ended cases older than this many days are redacted by the daily retention job; null: kept. */
    retentionDays: integer('retention_days'),
    /**
     * The team's API budgets per minute, as an operator raised (or lowered) them with
     * `teams update --rate-limit-read/--rate-limit-write`; null: the configured defaults
     * (RATE_LIMIT_READ_PER_MINUTE, RATE_LIMIT_WRITE_PER_MINUTE: the contract's 120 and 30).
     */
    rateLimitReadPerMinute: integer('rate_limit_read_per_minute'),
    rateLimitWritePerMinute: integer('rate_limit_write_per_minute'),
    /*
     * How the team appears to the people it verifies (console's Branding page): the name shown
     * instead of `name` (at most 30 characters, so that a text message stays one segment), the
     * language their mails and pages fall back to, the primary colour (#rrggbb, checked for WCAG AA
     * contrast when set), a support line, and the digest naming the current logo (team_logos).
     */
    displayName: text('display_name'),
    defaultLocale: text('default_locale').$type<Locale>(),
    brandColor: text('brand_color'),
    supportLine: text('support_line'),
    logoDigest: text('logo_digest'),
    createdAt: createdAt(),
  },
  (t) => [
    check('teams_subscription_status_check', oneOf(t.subscriptionStatus, SUBSCRIPTION_STATUSES)),
    check('teams_retention_days_positive', sql`${t.retentionDays} is null or ${t.retentionDays} > 0`),
    check('teams_topup_balance_nonnegative', sql`${t.topupBalanceCents} >= 0`),
    check('teams_display_name_length', sql`char_length(${t.displayName}) between 1 and 30`),
    check('teams_brand_color_hex', sql`${t.brandColor} ~ '^#[0-9a-f]{6}$'`),
    check(
      'teams_rate_limits_positive',
      sql`coalesce(${t.rateLimitReadPerMinute}, 1) > 0 and coalesce(${t.rateLimitWritePerMinute}, 1) > 0`,
    ),
  ],
);

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/**
 * A team's logo as the server re-encoded it (PNG, at most 1024 px a side), served from our origin
 * at a path named by its digest, so it may be cached for good and a new logo is a new address.
 * Only the current one is kept.
 */
export const teamLogos = pgTable('team_logos', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  /** SHA-256 of `image`, hex: the logo's address and its ETag. */
  digest: text('digest').notNull(),
  contentType: text('content_type').notNull(),
  image: bytea('image').notNull(),
  width: integer('width').notNull(),
  height: integer('height').notNull(),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull().default(''),
    /** SHA-256 of the full key, hex. The key itself is never stored; the unique index is the lookup path. */
    keyHash: text('key_hash').notNull().unique('api_keys_key_hash_unique'),
    /** First characters and last four, for recognising a key in the console. */
    prefix: text('prefix').notNull(),
    lastFour: text('last_four').notNull(),
    /** A live key (`vouch_live_…`) or a test key (`vouch_test_…`): the mode of all it does. */
    livemode: livemode(),
    createdAt: createdAt(),
    lastUsedAt: timestamptz('last_used_at'),
    revokedAt: timestamptz('revoked_at'),
  },
  // Listing a team's keys in the console.
  (t) => [index('api_keys_team_idx').on(t.teamId, t.createdAt)],
);

/**
 * Secrets the service keeps for each team, apart from `teams` so that no query of team data reads
 * them by accident. `hmac_key` keys the HMACs that stand in for a team's personal or guessable
 * values where only equality matters (idempotent requests' hashes), so that a copy of the database
 * without the key cannot be searched by guessing.
 */
export const teamSecrets = pgTable('team_secrets', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  /** 32 random bytes, base64url. */
  hmacKey: text('hmac_key').notNull(),
  /**
   * 32 random bytes, base64url, keying the HMACs that stand for personal values in the audit
   * chain and evidence records. Unlike `hmac_key` it is meant to leave: the team hands it to its
   * auditor, who can then check a record against a value they hold. Null until first needed.
   */
  evidenceKey: text('evidence_key'),
  createdAt: createdAt(),
});

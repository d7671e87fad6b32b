import { type Env, PSEUDO_LOCALE_TAG } from './env';
import { liveStandIns } from './stand-ins';

/** The vendors' API origins: credentials and people's data travel to them. */
const VENDOR_API_BASES = ['TWILIO_API_BASE', 'STRIPE_API_BASE'] as const;

/**
 * Why `VOUCH_ENV=production` refuses this configuration: one sentence per setting, naming it
 * (empty when it may start). Each is what development allows so that a fresh clone works, and what
 * would be unsafe with real people and real vendors: a stand-in verifying nobody, the embedded
 * database, webhooks allowed into the private network, vendor credentials sent in clear.
 */
export function productionRefusals(config: Env): string[] {
  if (config.VOUCH_ENV !== 'production') return [];
  const refusals = liveStandIns(config).map(
    (standIn) => `a stand-in would serve live traffic: ${standIn.description}`,
  );
  if (!config.DATABASE_URL) {
    refusals.push(
      'DATABASE_URL is unset: the embedded PostgreSQL is for development; set DATABASE_URL to your PostgreSQL server',
    );
  }
  if (config.WEBHOOK_ALLOW_PRIVATE_NETWORKS) {
    refusals.push(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets webhook deliveries reach loopback and private addresses (tests and local development only)',
    );
  }
  if (!config.KEYS_SECRET) {
    refusals.push(
      'KEYS_SECRET is unset: the signing keys’ private halves would be encrypted under a secret kept in the database beside them; set one of at least 32 characters, kept apart from the database',
    );
  }
  if (config.DEFAULT_LOCALE === PSEUDO_LOCALE_TAG) {
    refusals.push(
      `DEFAULT_LOCALE=${PSEUDO_LOCALE_TAG} is the pseudo-locale, accented English for finding untranslated strings (development only)`,
    );
  }
  for (const name of VENDOR_API_BASES) {
    const base = new URL(config[name]);
    if (base.protocol !== 'https:') {
      refusals.push(
        `${name} must be https, not ${base.protocol} (${base.origin}): the vendor's credentials would travel in clear`,
      );
    }
  }
  return refusals;
}

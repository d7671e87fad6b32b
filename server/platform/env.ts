import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { SUPPORTED_LOCALES } from '@/db/schema/values';

/**
 * The pseudo-locale's tag (server/i18n/pseudo-locale.ts): as DEFAULT_LOCALE, every page, mail and
 * text a case without a language produces comes out pseudo-localised. Production refuses it.
 */
export const PSEUDO_LOCALE_TAG = 'en-XA';

const booleanString = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const retrySchedule = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'comma-separated seconds')
  .transform((v) => v.split(',').map(Number));

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

const trustedProxies = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  )
  .refine(
    (entries) =>
      entries.every((entry) => {
        if (PROXY_RANGE_NAMES.includes(entry)) return true;
        if (entry.includes('/')) return ipaddr.isValidCIDR(entry);
        return ipaddr.isValid(entry);
      }),
    'comma-separated IP addresses or CIDR ranges (or loopback, linklocal, uniquelocal)',
  );

/**
 * The operator's configuration (the environment variables docs/configuration.md lists), validated once. A bad
 * value stops the process at start-up with a message naming the variable, instead of failing
 * later on some request.
 */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  /** The interface a web process listens on; unset, every interface. */
  HOST: z.string().min(1).optional(),
  /**
   * `production` refuses to start while a stand-in (dev mailbox, dev SMS, simulated ID checks)
   * would serve live traffic; `development` allows them and says so.
   */
  VOUCH_ENV: z.enum(['development', 'production']).default('development'),
  /**
   * Reverse proxies whose X-Forwarded-For is believed: comma-separated addresses or CIDR ranges
   * (or `loopback`, `linklocal`, `uniquelocal`). Unset, the socket's peer is the client.
   */
  TRUSTED_PROXIES: trustedProxies.default([]),
  DATABASE_URL: z.string().url().optional(),
  /**
   * The database itself, for what needs a session of its own (the migrations' lock) when
   * DATABASE_URL is a pooler; unset, DATABASE_URL.
   */
  DIRECT_DATABASE_URL: z.string().url().optional(),
  /**
   * `transaction` when DATABASE_URL is a transaction pooler (PgBouncer's `pool_mode = transaction`):
   * no statement is prepared by name, no session-level lock or setting and no LISTEN goes through it.
   */
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session'),
  /** Connections a process's main pool opens at most (its rate-limit and job pools are apart). */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
  BASE_URL: z.string().url().optional(),
  VERIFY_URL_BASE: z.string().url().optional(),
  /**
   * The language subjects and managers are addressed in when neither the case nor the team names
   * one (and, on pages, nor the visitor's browser): one of the supported locales.
   */
  DEFAULT_LOCALE: z.enum([...SUPPORTED_LOCALES, PSEUDO_LOCALE_TAG]).default('en'),
  CASE_TTL_SECONDS: z.coerce.number().int().positive().default(172800),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.default([30, 120, 900, 3600, 14400, 43200, 86400]),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanString.default(false),
  RATE_LIMIT_READ_PER_MINUTE: z.coerce.number().int().positive().default(120),
  RATE_LIMIT_WRITE_PER_MINUTE: z.coerce.number().int().positive().default(30),
  /**
   * API requests one process works on at once; more are refused at once with 503 and Retry-After
   * instead of queueing without bound (latency and memory) when clients send faster than it serves.
   */
  MAX_CONCURRENT_REQUESTS: z.coerce.number().int().positive().default(128),
  /**
   * Connections one web process holds open at once; past it, a new connection is answered 503
   * and closed, so clients that connect and hold cannot take the process's memory without bound.
   */
  MAX_CONNECTIONS: z.coerce.number().int().positive().default(1000),
  /** Seconds a response may wait with none of its output taken by the client before it is closed. */
  SEND_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(30),
  /** Identity uploads (up to 25 MB each, held while read and checked) one process takes at once. */
  MAX_IDENTITY_UPLOADS: z.coerce.number().int().positive().default(8),
  SMTP_URL: z.string().url().optional(),
  RUN_WORKERS: booleanString.default(true),
  /**
   * `false`: web and worker processes do not migrate at start; they wait for the schema this
   * release expects (unready, reason `schema`) until `vouch migrate` has applied it.
   */
  MIGRATE_ON_START: booleanString.default(true),
  /** Where a worker process answers `/livez` and `/readyz` (a web process answers them on PORT). */
  HEALTH_PORT: z.coerce.number().int().min(1).max(65535).default(9465),
  /**
   * Where a process serves Prometheus's `/metrics` (never on PORT); `0` turns metrics off. Under
   * `npm start` each process takes the next free port from it.
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /**
   * Seconds a web process keeps serving after SIGTERM, already answering `/readyz` 503, so that
   * load balancers stop sending it requests before it stops taking them.
   */
  DRAIN_DELAY_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  /**
   * Web processes `npm start` runs (besides one worker process); unset, one per CPU core, less one
   * while the embedded database shares the machine (at least one).
   */
  WEB_PROCESSES: z.coerce.number().int().min(1).max(64).optional(),
  /**
   * What a web process serves: `all` (the REST API, the pages, the console, the OpenID provider) or
   * `api`, the REST API alone, without loading the page renderer (a smaller process, for a fleet
   * that routes `/v1/` apart).
   */
  WEB_ROLE: z.enum(['all', 'api']).default('all'),
  /** First delay before an e-mail is retried (doubling after); lowered only in tests. */
  MAIL_RETRY_DELAY_SECONDS: z.coerce.number().int().min(0).default(30),
  /** Events (with their deliveries and attempts) older than this are deleted by the daily job. */
  EVENT_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
  /** Sent (or given-up) mails and dev-mailbox entries older than this are deleted. */
  MAIL_RETENTION_DAYS: z.coerce.number().int().positive().default(7),
  /** Audit entries older than this are deleted. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().positive().default(365),
  /** Seconds between runs of the periodic jobs (case expiry, delivery recovery). */
  JOB_TICK_SECONDS: z.coerce.number().int().min(1).default(5),
  /**
   * Seconds between runs of the retention job and the idempotency purge, across all workers:
   * a day (each runs early in the UTC day). Shortened only by tests.
   */
  RETENTION_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(86_400),
  /** Signs console session cookies; unset, a key generated once and kept in the database is used. */
  AUTH_SECRET: z.string().min(32).optional(),
  /**
   * The secret the signing keys' private halves are encrypted under (a key is derived from it;
   * at least 32 characters). Production refuses to start without it; in development, unset, one
   * generated once and kept in the database is used.
   */
  KEYS_SECRET: z.string().min(32).optional(),
  /** KEYS_SECRET's former name, still read so that a deployment set up with it keeps its keys. */
  SIGNING_KEY_SECRET: z.string().min(32).optional(),
  /** How SMS codes leave: `dev` logs them (no messages sent), `twilio` sends through Twilio. */
  SMS_PROVIDER: z.enum(['dev', 'twilio']).default('dev'),
  TWILIO_ACCOUNT_SID: z.string().optional(),
  TWILIO_AUTH_TOKEN: z.string().optional(),
  /** The sending number (E.164) or messaging service sender. */
  TWILIO_FROM: z.string().optional(),
  /** Twilio's API origin; a local stand-in in tests. */
  TWILIO_API_BASE: z.string().url().default('https://api.twilio.com'),
  /** Who checks ID documents and selfies: the deterministic `simulated` provider or Stripe Identity. */
  IDENTITY_PROVIDER: z.enum(['simulated', 'stripe']).default('simulated'),
  STRIPE_SECRET_KEY: z.string().optional(),
  /** Signing secret of the Stripe webhook endpoint that receives identity events. */
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /** Stripe's API origin; a local stand-in in tests. */
  STRIPE_API_BASE: z.string().url().default('https://api.stripe.com'),
  /** Where the embedded PostgreSQL keeps its data when DATABASE_URL is unset. */
  EMBEDDED_PG_DIR: z.string().default('.data/postgres'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
});

/** The names the signing keys' secret is read under: the current one first. */
export type KeysSecretVariable = 'KEYS_SECRET' | 'SIGNING_KEY_SECRET';

export type Env = Omit<z.infer<typeof envSchema>, 'SIGNING_KEY_SECRET'> & {
  BASE_URL: string;
  VERIFY_URL_BASE: string;
  /** Which variable KEYS_SECRET came from, for messages that must name what the operator set. */
  KEYS_SECRET_VARIABLE: KeysSecretVariable;
};

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export function parseEnv(source: NodeJS.ProcessEnv): Env {
  // Empty strings mean "unset" (as in `SMTP_URL= npm start`).
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ''));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const { SIGNING_KEY_SECRET: formerKeysSecret, ...parsed } = result.data;
  if (parsed.KEYS_SECRET && formerKeysSecret && parsed.KEYS_SECRET !== formerKeysSecret) {
    throw new Error(
      'Invalid configuration: KEYS_SECRET and SIGNING_KEY_SECRET (its former name) differ: set KEYS_SECRET only',
    );
  }
  const baseUrl = stripTrailingSlash(parsed.BASE_URL ?? `http://localhost:${parsed.PORT}`);
  return {
    ...parsed,
    KEYS_SECRET: parsed.KEYS_SECRET ?? formerKeysSecret,
    KEYS_SECRET_VARIABLE: !parsed.KEYS_SECRET && formerKeysSecret ? 'SIGNING_KEY_SECRET' : 'KEYS_SECRET',
    BASE_URL: baseUrl,
    VERIFY_URL_BASE: stripTrailingSlash(parsed.VERIFY_URL_BASE ?? baseUrl),
  };
}

let cached: Env | undefined;

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

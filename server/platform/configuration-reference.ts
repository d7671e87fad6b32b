import { z } from 'zod';
import { envSchema } from './env';

/**
 * The configuration reference an operator reads (docs/configuration.md, generated from here by
 * `npm run docs:configuration`): every variable a process of the service reads, its default, its
 * meaning and which processes read it. The validated settings' names and defaults come from the
 * schema itself, and the record below must name each of them (the compiler says when one is
 * missing); a test fails when the committed page and this module disagree.
 */

/** The processes, as an operator starts them (`vouch <role>` in the image, `npm run …` here). */
export type ProcessRole = 'web' | 'worker' | 'migrate' | 'launcher' | 'cli';

interface SettingDoc {
  meaning: string;
  processes: readonly ProcessRole[];
  /** What happens unset, where the schema's default alone would not say it. */
  unset?: string;
}

const SERVICE: readonly ProcessRole[] = ['web', 'worker'];
const EVERY: readonly ProcessRole[] = ['web', 'worker', 'migrate', 'launcher', 'cli'];

type SettingName = keyof z.input<typeof envSchema>;

const VALIDATED: Record<SettingName, SettingDoc> = {
  PORT: { meaning: 'HTTP port of the web processes', processes: ['web', 'launcher'] },
  HOST: {
    meaning: 'interface the web process (and every health and metrics port) listens on',
    processes: ['web', 'worker', 'launcher'],
    unset: 'every interface',
  },
  VOUCH_ENV: {
    meaning:
      '`production` refuses to start with a stand-in serving live traffic, without `DATABASE_URL`, with `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true` or with a vendor API base that is not https',
    processes: EVERY,
  },
  TRUSTED_PROXIES: {
    meaning:
      'comma-separated addresses or CIDR ranges (or `loopback`, `linklocal`, `uniquelocal`) of reverse proxies whose `X-Forwarded-For` is believed',
    processes: ['web'],
    unset: 'no proxy is trusted',
  },
  DATABASE_URL: {
    meaning: 'the PostgreSQL (15 or newer) to use; required by `VOUCH_ENV=production`',
    processes: EVERY,
    unset: 'an embedded PostgreSQL is started, its data in `EMBEDDED_PG_DIR`',
  },
  DIRECT_DATABASE_URL: {
    meaning:
      'the database itself when `DATABASE_URL` is a pooler: migrations (a session-level lock) connect here',
    processes: ['web', 'worker', 'migrate', 'cli'],
    unset: '`DATABASE_URL`',
  },
  DATABASE_POOL_MODE: {
    meaning:
      "`transaction` when `DATABASE_URL` is a transaction pooler (PgBouncer's `pool_mode = transaction`): no statement prepared by name, no session setting or lock, no LISTEN through it",
    processes: SERVICE,
  },
  DATABASE_POOL_SIZE: {
    meaning:
      "connections a process's main pool opens at most (besides 4 for rate limits, 4 or 10 for jobs, 1 for readiness)",
    processes: SERVICE,
  },
  BASE_URL: {
    meaning: 'public origin of the API and the console',
    processes: ['web', 'worker', 'launcher'],
    unset: '`http://localhost:$PORT`',
  },
  VERIFY_URL_BASE: {
    meaning: 'origin of the verification pages',
    processes: SERVICE,
    unset: '`BASE_URL`',
  },
  DEFAULT_LOCALE: {
    meaning:
      'language of pages, mails and texts when neither the case, the browser nor the team names one (`en-XA`, the pseudo-locale, outside production only)',
    processes: SERVICE,
  },
  CASE_TTL_SECONDS: { meaning: 'case lifetime (lowered only in tests and demos)', processes: ['web'] },
  WEBHOOK_RETRY_SCHEDULE: { meaning: 'seconds before webhook attempts 2..8', processes: SERVICE },
  WEBHOOK_TIMEOUT_MS: { meaning: 'per-attempt time-out (connect and response)', processes: SERVICE },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    meaning: '`true` lets deliveries reach loopback and private addresses (tests, local development only)',
    processes: SERVICE,
  },
  RATE_LIMIT_READ_PER_MINUTE: { meaning: 'GET budget per team per minute', processes: ['web'] },
  RATE_LIMIT_WRITE_PER_MINUTE: {
    meaning: 'POST, PATCH and DELETE budget per team per minute',
    processes: ['web'],
  },
  MAX_CONCURRENT_REQUESTS: {
    meaning:
      'API requests one process works on at once; past it, 503 `SERVICE_UNAVAILABLE` with `Retry-After: 1` rather than a queue',
    processes: ['web'],
  },
  MAX_CONNECTIONS: {
    meaning: 'connections one web process holds open; past it, a new one is answered 503 and closed',
    processes: ['web'],
  },
  SEND_TIMEOUT_SECONDS: {
    meaning: 'a connection whose waiting answer the client has taken none of for this long is closed',
    processes: ['web'],
  },
  MAX_IDENTITY_UPLOADS: {
    meaning: 'identity uploads one web process reads and checks at once; past it, 503 with `Retry-After: 10`',
    processes: ['web'],
  },
  SMTP_URL: {
    meaning: 'a real SMTP server, e.g. `smtp://127.0.0.1:2525`',
    processes: SERVICE,
    unset: 'e-mail goes to the dev mailbox (owners and admins see it in the console)',
  },
  RUN_WORKERS: {
    meaning:
      "`false` runs no background jobs in a web process (`npm run web`, the launcher's and the image's web processes never do)",
    processes: ['web'],
  },
  MIGRATE_ON_START: {
    meaning:
      '`false`: web and worker processes do not migrate; they wait (unready, `schema`) until `vouch migrate` has run',
    processes: SERVICE,
  },
  HEALTH_PORT: {
    meaning:
      'where a worker answers `/livez`, `/readyz` and `/metrics` (a web process answers health on `PORT`)',
    processes: ['worker', 'launcher'],
    unset: 'under `npm start`, the first free port from it',
  },
  METRICS_PORT: {
    meaning: "where a process serves Prometheus's `/metrics` (never on `PORT`); `0` turns metrics off",
    processes: ['web', 'worker', 'launcher'],
    unset: 'under `npm start`, each process the next free port from it',
  },
  DRAIN_DELAY_SECONDS: {
    meaning:
      'seconds a web process keeps serving after SIGTERM while `/readyz` already answers 503 `draining`',
    processes: ['web'],
  },
  WEB_PROCESSES: {
    meaning: '(`npm start`, `vouch launch`) web processes started besides one worker process',
    processes: ['launcher'],
    unset: 'one per CPU core, less one while the embedded database shares the machine (at least 1)',
  },
  WEB_ROLE: {
    meaning:
      '`all`: a web process serves everything; `api`: only the REST API under `/v1/` (every other path 404), without loading Next.js: a smaller process for a load balancer that routes `/v1/` to its own fleet',
    processes: ['web'],
  },
  MAIL_RETRY_DELAY_SECONDS: {
    meaning: 'first delay before a failed e-mail is retried (doubling, 5 retries); lowered in tests',
    processes: SERVICE,
  },
  EVENT_RETENTION_DAYS: {
    meaning:
      'events older than this are deleted by the daily retention job, with their deliveries and attempts',
    processes: SERVICE,
  },
  MAIL_RETENTION_DAYS: {
    meaning: 'sent (or given-up) mails and dev-mailbox entries older than this are deleted',
    processes: SERVICE,
  },
  AUDIT_RETENTION_DAYS: { meaning: 'audit entries older than this are deleted', processes: SERVICE },
  JOB_TICK_SECONDS: {
    meaning: 'period of the case-expiry sweep and of the recovery of interrupted webhook attempts',
    processes: SERVICE,
  },
  RETENTION_INTERVAL_SECONDS: {
    meaning: 'period of the retention job and the idempotency purge, across all workers (shortened by tests)',
    processes: SERVICE,
  },
  AUTH_SECRET: {
    meaning: 'key (32+ characters) that signs console session cookies; change it to end every session',
    processes: ['web', 'cli'],
    unset: 'generated once and kept in the database',
  },
  KEYS_SECRET: {
    meaning:
      "the secret (32+ characters) the signing keys' private halves (evidence records, ID tokens) and a checked import's answers are encrypted under; keep it beside, never in, a backup",
    processes: ['web', 'worker', 'cli'],
    unset: 'generated once and kept in the database; production refuses that',
  },
  SIGNING_KEY_SECRET: {
    meaning: "KEYS_SECRET's former name, still read; set both only to the same value",
    processes: ['web', 'worker', 'cli'],
    unset: 'KEYS_SECRET applies',
  },
  SMS_PROVIDER: {
    meaning: '`dev` keeps texts in the dev mailbox (nothing is sent); `twilio` sends through Twilio',
    processes: SERVICE,
  },
  TWILIO_ACCOUNT_SID: { meaning: 'Twilio account, required with `SMS_PROVIDER=twilio`', processes: SERVICE },
  TWILIO_AUTH_TOKEN: { meaning: "the Twilio account's auth token", processes: SERVICE },
  TWILIO_FROM: { meaning: 'the sending number (E.164) or messaging service sender', processes: SERVICE },
  TWILIO_API_BASE: { meaning: "Twilio's API origin (a local stand-in in tests)", processes: SERVICE },
  IDENTITY_PROVIDER: {
    meaning: 'who checks ID documents and selfies: `simulated` (deterministic) or `stripe` (Stripe Identity)',
    processes: SERVICE,
  },
  STRIPE_SECRET_KEY: {
    meaning: 'Stripe Identity credentials, required with `IDENTITY_PROVIDER=stripe`',
    processes: SERVICE,
  },
  STRIPE_WEBHOOK_SECRET: {
    meaning:
      'signing secret of the Stripe webhook endpoint for `identity.verification_session.*`, pointed at `{VERIFY_URL_BASE}/integrations/stripe`',
    processes: SERVICE,
  },
  STRIPE_API_BASE: { meaning: "Stripe's API origin (a local stand-in in tests)", processes: SERVICE },
  EMBEDDED_PG_DIR: {
    meaning:
      "data directory of the embedded PostgreSQL (its socket inside; its superuser's password in `<dir>.password`, mode 0600)",
    processes: ['launcher', 'web', 'worker'],
  },
  EMBEDDED_PG_PORT: {
    meaning:
      "number of the embedded PostgreSQL's socket (`.s.PGSQL.<port>` in its data directory); no TCP port is opened",
    processes: ['launcher', 'web', 'worker'],
  },
};

/** Read by the processes outside the validated schema: the logger's and standard variables. */
const UNVALIDATED: Record<string, SettingDoc & { default: string }> = {
  LOG_LEVEL: {
    default: '`info`',
    meaning:
      '`debug`, `info`, `warn` or `error` (JSON lines: up to info on stdout, warnings and errors on stderr)',
    processes: EVERY,
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    default: 'unset: no traces, the SDK not even loaded',
    meaning:
      "an OpenTelemetry collector's OTLP address (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): traces go there, and the other standard `OTEL_*` variables apply (protocol, sampler, headers)",
    processes: SERVICE,
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    default: '`OTEL_EXPORTER_OTLP_ENDPOINT`',
    meaning: 'where traces go, when only they go to this collector',
    processes: SERVICE,
  },
  OTEL_METRICS_EXPORTER: {
    default: '`none`',
    meaning: "the SDK's own metrics exporter; metrics are Prometheus's, on `METRICS_PORT`",
    processes: SERVICE,
  },
  OTEL_LOGS_EXPORTER: {
    default: '`none`',
    meaning: "the SDK's own logs exporter; logs are JSON lines on stdout and stderr",
    processes: SERVICE,
  },
  OTEL_SERVICE_NAME: {
    default: '`vouch-web` or `vouch-worker`',
    meaning: 'the service name traces carry',
    processes: SERVICE,
  },
  NEXT_DIST_DIR: {
    default: '`.next`',
    meaning: 'the Next.js build a web process serves (several builds can share one tree: benchmarks do)',
    processes: ['web'],
  },
  NODE_EXTRA_CA_CERTS: {
    default: 'unset',
    meaning:
      "Node's own: more certificate authorities to trust (webhook receivers, SMTP, vendors' stand-ins)",
    processes: SERVICE,
  },
};

export interface ReferenceRow {
  name: string;
  default: string;
  meaning: string;
  processes: readonly ProcessRole[];
}

/** A schema default as the page shows it: `3000`, `false`, `30,120,900`. */
function shownDefault(field: z.ZodType): string | undefined {
  if (!(field instanceof z.ZodDefault)) return undefined;
  const value: unknown = field.def.defaultValue;
  if (Array.isArray(value)) return value.length === 0 ? undefined : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

/** Every row, in the schema's order, then the unvalidated ones. */
export function configurationReference(): ReferenceRow[] {
  const validated = Object.entries(envSchema.shape).map(([name, field]) => {
    const doc = VALIDATED[name as SettingName];
    const fromSchema = shownDefault(field as z.ZodType);
    return {
      name,
      default: doc.unset
        ? fromSchema
          ? `${fromSchema}; ${doc.unset}`
          : `unset: ${doc.unset}`
        : (fromSchema ?? 'unset'),
      meaning: doc.meaning,
      processes: doc.processes,
    };
  });
  const others = Object.entries(UNVALIDATED).map(([name, doc]) => ({ name, ...doc }));
  return [...validated, ...others];
}

/** Names of every variable the reference lists. */
export function referencedVariables(): Set<string> {
  return new Set(configurationReference().map((row) => row.name));
}

/** docs/configuration.md, whole. */
export function configurationPage(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = configurationReference().map(
    (row) =>
      `| \`${row.name}\` | ${cell(row.default)} | ${cell(row.meaning)} | ${row.processes.join(', ')} |`,
  );
  return [
    '# Configuration',
    '',
    '<!-- Generated from server/platform/configuration-reference.ts by `npm run docs:configuration`; edit it there. -->',
    '',
    'Every variable a process of Vouch reads. A bad value stops the process at start-up with one line naming',
    "the variable. Processes: `web` and `worker` (the image's `vouch web` and `vouch worker`, `npm run web` and",
    '`npm run worker`), `migrate` (`vouch migrate`), `launcher` (`npm start`, `vouch launch`), `cli` (`npm run cli`,',
    '`vouch cli`).',
    '',
    '| Variable | Default | Meaning | Read by |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

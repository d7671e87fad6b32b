import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { connectDatabase, type Db, migrateDatabase } from '@/db/client';
import { SIGNING_ALGORITHMS, SUBSCRIPTION_STATUSES, teams } from '@/db/schema';
import { clientActions } from '@/server/application/oidc/client-actions';
import { createClientInput, toClientWire } from '@/server/application/oidc/wire';
import { revokeKey } from '@/server/application/signing/revoke-signing-key';
import { chainedTeams, verifyAuditChain } from '@/server/audit/audit-chain';
import { OPERATOR_ACTOR } from '@/server/audit/record-audit';
import { createApiKey, revokeApiKey } from '@/server/auth/api-keys';
import { findClient, listClients, MAX_SECRET_GRACE_SECONDS } from '@/server/oidc/oidc-clients';
import { directDatabaseUrl, poolSettings, resolveDatabaseUrl } from '@/server/platform/boot-runtime';
import { systemClock } from '@/server/platform/clock';
import { env } from '@/server/platform/env';
import { isAppError } from '@/server/platform/errors';
import { lastServedBaseUrl } from '@/server/platform/served-base-url';
import { publishedKeys, rotateSigningKey } from '@/server/signing/signing-keys';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';
import { createTeam, listTeams, MAX_RETENTION_DAYS, updateTeam } from '@/server/teams/manage-teams';
import {
  type CommandName,
  commandUsage,
  type DatabaseCommandName,
  type Lists,
  TEAM_UPDATE_FLAGS,
  UsageError,
  type Values,
} from './usage';

/** What each operator command does, on the database (cli/usage.ts says how each is called). */

const uuid = (flag: string) => z.uuid({ error: `${flag} must be a UUID` });

function required(name: CommandName, values: Values, flag: string): string {
  const value = values[flag];
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`, commandUsage(name));
  return value;
}

/** `--retention-days`: a number of days (1 to MAX_RETENTION_DAYS), or `none` to keep ended cases. */
function parseRetentionDays(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  return z.coerce
    .number({ error: '--retention-days must be a number of days or none' })
    .int({ error: '--retention-days must be a whole number of days or none' })
    .min(1, { error: '--retention-days must be at least 1 (or none)' })
    .max(MAX_RETENTION_DAYS, { error: `--retention-days must be at most ${MAX_RETENTION_DAYS} (or none)` })
    .parse(value);
}

/** A team's API budget per minute, or `default` (null: the configured one). */
function parseBudget(flag: string, value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  return z.coerce
    .number({ error: `--${flag} must be a number of requests a minute or default` })
    .int({ error: `--${flag} must be a whole number of requests a minute or default` })
    .min(1, { error: `--${flag} must be at least 1 (or default)` })
    .max(1_000_000, { error: `--${flag} must be at most 1000000 (or default)` })
    .parse(value);
}

/**
 * The service's URL for the links a command prints: BASE_URL when this shell sets it, else the
 * one the service's web processes recorded (this shell does not know their PORT), else the default.
 */
async function serviceBaseUrl(db: Db): Promise<string> {
  if (process.env.BASE_URL) return env().BASE_URL;
  return (await lastServedBaseUrl(db)) ?? env().BASE_URL;
}

type Run = (values: Values, db: Db, lists: Lists) => Promise<Record<string, unknown>>;

/** A team's change made by the operator, audited as such. */
function operatorContext(db: Db, teamId: string) {
  return { db, teamId, actor: OPERATOR_ACTOR, clock: systemClock };
}

/** The client `--client` names, whichever team's. */
async function operatorClient(db: Db, clientId: string) {
  const client = await findClient(db, clientId);
  if (!client) throw new Error(`no identity-provider client ${clientId}`);
  return client;
}

const RUNS: Record<DatabaseCommandName, Run> = {
  'teams create': async (values, db) => {
    const adminEmail = z
      .email({ error: '--admin-email must be an e-mail address' })
      .parse(required('teams create', values, 'admin-email'));
    const { team, key, testKey, owner } = await createTeam(
      db,
      { name: required('teams create', values, 'name'), adminEmail, planCode: values.plan },
      systemClock,
    );
    return {
      team_id: team.id,
      name: team.name,
      plan: team.planCode,
      subscription_status: team.subscriptionStatus,
      api_key: key.token,
      key_id: key.id,
      test_api_key: testKey.token,
      test_key_id: testKey.id,
      admin_email: adminEmail,
      console_url: `${await serviceBaseUrl(db)}/console`,
      // Printed once: the owner signs in with it and must choose a new password. Null when
      // the e-mail already has a console account (its password is unchanged).
      admin_password: owner.oneTimePassword,
    };
  },
  'teams list': async (values, db) => ({
    teams: (await listTeams(db, { nameContains: values.name })).map((team) => ({
      team_id: team.id,
      name: team.name,
      plan: team.planCode,
      subscription_status: team.subscriptionStatus,
      trial_ends_at: team.trialEndsAt?.toISOString() ?? null,
      created_at: team.createdAt.toISOString(),
    })),
  }),
  'teams update': async (values, db) => {
    const teamId = uuid('--team').parse(required('teams update', values, 'team'));
    const status = values['subscription-status'];
    if (TEAM_UPDATE_FLAGS.every((flag) => values[flag] === undefined)) {
      throw new UsageError(
        `nothing to update: give at least one of ${TEAM_UPDATE_FLAGS.map((f) => `--${f}`).join(', ')}`,
        commandUsage('teams update'),
      );
    }
    const team = await updateTeam(db, teamId, {
      planCode: values.plan,
      subscriptionStatus: status === undefined ? undefined : z.enum(SUBSCRIPTION_STATUSES).parse(status),
      topupBalanceCents:
        values['topup-cents'] === undefined
          ? undefined
          : z.coerce.number().int().min(0).parse(values['topup-cents']),
      trialEndsAt:
        values['trial-ends-at'] === undefined
          ? undefined
          : new Date(z.iso.datetime({ offset: true }).parse(values['trial-ends-at'])),
      retentionDays: parseRetentionDays(values['retention-days']),
      rateLimitReadPerMinute: parseBudget('rate-limit-read', values['rate-limit-read']),
      rateLimitWritePerMinute: parseBudget('rate-limit-write', values['rate-limit-write']),
    });
    return {
      team_id: team.id,
      plan: team.planCode,
      subscription_status: team.subscriptionStatus,
      topup_balance_cents: team.topupBalanceCents,
      trial_ends_at: team.trialEndsAt?.toISOString() ?? null,
      retention_days: team.retentionDays,
      // Null: the configured defaults.
      rate_limit_read_per_minute: team.rateLimitReadPerMinute,
      rate_limit_write_per_minute: team.rateLimitWritePerMinute,
    };
  },
  'keys create': async (values, db) => {
    const teamId = uuid('--team').parse(required('keys create', values, 'team'));
    const [team] = await db.select({ id: teams.id }).from(teams).where(eq(teams.id, teamId));
    if (!team) throw new UsageError(`no team ${teamId}`, commandUsage('keys create'));
    const mode = z
      .enum(['live', 'test'], { error: '--mode must be live or test' })
      .parse(values.mode ?? 'live');
    const key = await createApiKey(db, { teamId, name: values.name, mode });
    return { api_key: key.token, key_id: key.id, team_id: key.teamId, mode: key.mode };
  },
  'keys revoke': async (values, db) => {
    const keyId = uuid('--key').parse(required('keys revoke', values, 'key'));
    if (!(await revokeApiKey(db, { keyId }, systemClock))) {
      throw new UsageError(`no key ${keyId}`, commandUsage('keys revoke'));
    }
    return { key_id: keyId, revoked: true };
  },
  'keys signing-rotate': async (values, db) => {
    const alg = z
      .enum(SIGNING_ALGORITHMS, { error: '--alg must be EdDSA or RS256' })
      .parse(values.alg ?? 'EdDSA');
    const config = env();
    if (config.VOUCH_ENV === 'production' && !config.KEYS_SECRET) {
      throw new UsageError(
        'KEYS_SECRET is unset: set it as the service has it (VOUCH_ENV=production keeps no secret in the database)',
        commandUsage('keys signing-rotate'),
      );
    }
    const kek = await signingKeyEncryptionKey(db, config.KEYS_SECRET);
    const rotated = await rotateSigningKey(db, alg, kek, systemClock());
    return { alg, kid: rotated.kid, retired: rotated.retired };
  },
  'keys signing-revoke': async (values, db) => {
    const kid = z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, '--kid must be a key id as the key set shows it')
      .parse(required('keys signing-revoke', values, 'kid'));
    const config = env();
    const revoked = await revokeKey(
      {
        db,
        clock: systemClock,
        kek: () => signingKeyEncryptionKey(db, config.KEYS_SECRET),
      },
      kid,
      values.reason ?? null,
    ).catch((error: unknown) => {
      if (isAppError(error) && error.appCode === 'NOT_FOUND') {
        throw new UsageError(error.detail, commandUsage('keys signing-revoke'));
      }
      throw error;
    });
    return { ...revoked, revoked: true };
  },
  'audit verify': async (values, db) => {
    const teamIds = values.team ? [uuid('--team').parse(values.team)] : await chainedTeams(db);
    const keys = await publishedKeys(db, systemClock(), env().AUDIT_RETENTION_DAYS);
    const reports = [];
    for (const teamId of teamIds) {
      const report = await verifyAuditChain(db, teamId, keys);
      if (report.broken) {
        const { entryId, seq, reason } = report.broken;
        throw new Error(
          `team ${teamId}: the audit chain breaks at ${entryId ? `entry ${entryId} (place ${seq})` : `place ${seq}`}: ${reason}`,
        );
      }
      reports.push({ team_id: teamId, entries: report.entries, sealed_through: report.sealedThrough });
    }
    return { ok: true, teams: reports };
  },
  'oidc-clients create': async (values, db, lists) => {
    const teamId = uuid('--team').parse(required('oidc-clients create', values, 'team'));
    const input = createClientInput.parse({
      name: required('oidc-clients create', values, 'name'),
      redirect_uris: lists['redirect-uri'],
      default_template: values.template ?? null,
      mode: z.enum(['test', 'live'], { error: '--mode must be test or live' }).parse(values.mode ?? 'test'),
    });
    const { client, secret } = await clientActions.create(operatorContext(db, teamId), input);
    return { ...toClientWire(client), team_id: teamId, client_secret: secret };
  },
  'oidc-clients list': async (values, db) => {
    const teamId = uuid('--team').parse(required('oidc-clients list', values, 'team'));
    return { team_id: teamId, clients: (await listClients(db, teamId)).map(toClientWire) };
  },
  'oidc-clients rotate-secret': async (values, db) => {
    const client = await operatorClient(db, required('oidc-clients rotate-secret', values, 'client'));
    const grace = z.coerce
      .number({ error: '--grace-seconds must be a number of seconds' })
      .int({ error: '--grace-seconds must be a whole number of seconds' })
      .min(0, { error: '--grace-seconds must be 0 or more' })
      .max(MAX_SECRET_GRACE_SECONDS, {
        error: `--grace-seconds must be at most ${MAX_SECRET_GRACE_SECONDS} (30 days)`,
      })
      .parse(values['grace-seconds'] ?? '0');
    const rotated = await clientActions.rotateSecret(operatorContext(db, client.teamId), client.id, grace);
    return { ...toClientWire(rotated.client), client_secret: rotated.secret };
  },
  'oidc-clients delete': async (values, db) => {
    const client = await operatorClient(db, required('oidc-clients delete', values, 'client'));
    await clientActions.delete(operatorContext(db, client.teamId), client.id);
    return { client_id: client.id, deleted: true };
  },
  // runCommand migrates before every command.
  'db migrate': async () => ({ migrated: true }),
};

/** Runs one command on the database (DATABASE_URL's, or the embedded one), migrated first. */
export async function runCommand(
  name: DatabaseCommandName,
  values: Values,
  lists: Lists = {},
): Promise<Record<string, unknown>> {
  const shutdownHooks: Array<() => Promise<void>> = [];
  try {
    const url = await resolveDatabaseUrl((hook) => shutdownHooks.push(hook));
    await migrateDatabase(directDatabaseUrl(url));
    const database = connectDatabase(url, { max: 2, poolMode: poolSettings().poolMode });
    try {
      return await RUNS[name](values, database.db, lists);
    } finally {
      await database.close();
    }
  } finally {
    for (const hook of shutdownHooks.reverse()) await hook();
  }
}

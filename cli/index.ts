import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { connectDatabase, migrateDatabase } from '@/db/client';
import { SUBSCRIPTION_STATUSES, teams } from '@/db/schema';
import { createApiKey, revokeApiKey } from '@/server/auth/api-keys';
import { resolveDatabaseUrl } from '@/server/platform/boot-runtime';
import { systemClock } from '@/server/platform/clock';
import { env } from '@/server/platform/env';
import { createTeam, MAX_RETENTION_DAYS, updateTeam } from '@/server/teams/manage-teams';

/**
 * The operator's command line: `npm run --silent cli -- <command>`. The last line
 * of stdout is one JSON object; errors go to stderr with exit code 1.
 */
const USAGE = `usage:
  teams create --name NAME --admin-email EMAIL [--plan PLAN]
  teams update --team TEAM_ID [--plan PLAN] [--subscription-status S] [--topup-cents N] [--trial-ends-at ISO]
               [--retention-days N|none]
  keys create --team TEAM_ID [--name NAME] [--mode live|test]
  keys revoke --key KEY_ID
  db migrate`;

class UsageError extends Error {}

const uuid = (flag: string) => z.uuid({ error: `${flag} must be a UUID` });

function required(values: Record<string, string | undefined>, flag: string): string {
  const value = values[flag];
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
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

async function main(argv: string[]): Promise<Record<string, unknown>> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'admin-email': { type: 'string' },
      plan: { type: 'string' },
      team: { type: 'string' },
      key: { type: 'string' },
      'subscription-status': { type: 'string' },
      'topup-cents': { type: 'string' },
      'trial-ends-at': { type: 'string' },
      mode: { type: 'string' },
      'retention-days': { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  const shutdownHooks: Array<() => Promise<void>> = [];
  const url = await resolveDatabaseUrl((hook) => shutdownHooks.push(hook));
  await migrateDatabase(url);
  const database = connectDatabase(url, { max: 2 });
  try {
    switch (command) {
      case 'db migrate':
        return { migrated: true };
      case 'teams create': {
        const adminEmail = z
          .email({ error: '--admin-email must be an e-mail address' })
          .parse(required(values, 'admin-email'));
        const { team, key, testKey, owner } = await createTeam(
          database.db,
          { name: required(values, 'name'), adminEmail, planCode: values.plan },
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
          console_url: `${env().BASE_URL}/console`,
          // Printed once: the owner signs in with it and must choose a new password. Null when
          // the e-mail already has a console account (its password is unchanged).
          admin_password: owner.oneTimePassword,
        };
      }
      case 'teams update': {
        const teamId = uuid('--team').parse(required(values, 'team'));
        const status = values['subscription-status'];
        const flags = ['plan', 'subscription-status', 'topup-cents', 'trial-ends-at', 'retention-days'];
        if (flags.every((flag) => values[flag as keyof typeof values] === undefined)) {
          throw new UsageError(
            `nothing to update: give at least one of ${flags.map((f) => `--${f}`).join(', ')}`,
          );
        }
        const team = await updateTeam(database.db, teamId, {
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
        });
        return {
          team_id: team.id,
          plan: team.planCode,
          subscription_status: team.subscriptionStatus,
          topup_balance_cents: team.topupBalanceCents,
          trial_ends_at: team.trialEndsAt?.toISOString() ?? null,
          retention_days: team.retentionDays,
        };
      }
      case 'keys create': {
        const teamId = uuid('--team').parse(required(values, 'team'));
        const [team] = await database.db.select({ id: teams.id }).from(teams).where(eq(teams.id, teamId));
        if (!team) throw new UsageError(`no team ${teamId}`);
        const mode = z
          .enum(['live', 'test'], { error: '--mode must be live or test' })
          .parse(values.mode ?? 'live');
        const key = await createApiKey(database.db, { teamId, name: values.name, mode });
        return { api_key: key.token, key_id: key.id, team_id: key.teamId, mode: key.mode };
      }
      case 'keys revoke': {
        const keyId = uuid('--key').parse(required(values, 'key'));
        if (!(await revokeApiKey(database.db, { keyId }, systemClock)))
          throw new UsageError(`no key ${keyId}`);
        return { key_id: keyId, revoked: true };
      }
      default:
        throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
    }
  } finally {
    await database.close();
    for (const hook of shutdownHooks.reverse()) await hook();
  }
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    const message =
      error instanceof z.ZodError
        ? error.issues.map((i) => i.message).join('; ')
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(`error: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`);
    process.exit(1);
  },
);

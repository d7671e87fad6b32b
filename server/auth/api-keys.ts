import { and, desc, eq, isNull, lt, or } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { apiKeys } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import { sha256Hex } from '@/server/platform/crypto';
import { type DataScope, type Mode, modeOf } from '@/server/platform/data-scope';
import { randomBase62 } from '@/server/platform/ids';
import type { BudgetSpend, SpentCounter } from '@/server/rate-limits/limiters';
import { keyLookupSpending } from './queries';

/** Each mode's keys start with their own prefix, so a key says at a glance what it touches. */
export const API_KEY_PREFIXES = { live: 'vouch_live_', test: 'vouch_test_' } as const satisfies Record<
  Mode,
  string
>;
const RANDOM_LENGTH = 40;
/** A key's `last_used_at` is refreshed at most this often, so reads do not each write a row. */
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Keys are looked up by the SHA-256 of the whole token. The token carries ~238 random bits, so a
 * fast hash is enough (no password-style stretching needed), and comparing hashes through a
 * unique index leaks nothing about the stored value through timing.
 */
export function hashApiKey(token: string): string {
  return sha256Hex(token);
}

export interface CreatedApiKey {
  id: string;
  teamId: string;
  /** The full key: shown to its owner once, never stored. */
  token: string;
  prefix: string;
  lastFour: string;
  name: string;
  mode: Mode;
  createdAt: Date;
}

/** How the console and the audit log name a key: its first characters and its last four. */
export function apiKeyLabel(token: string): string {
  // Stryker disable next-line MethodExpression: equivalent; both prefixes are 11 characters, so either mode's length cuts the label alike.
  const mode: Mode = token.startsWith(API_KEY_PREFIXES.test) ? 'test' : 'live';
  return `${token.slice(0, API_KEY_PREFIXES[mode].length + 4)}…${token.slice(-4)}`;
}

/** A new key of `mode` (live unless said otherwise). */
export async function createApiKey(
  db: Queryable,
  input: { teamId: string; name?: string; mode?: Mode },
): Promise<CreatedApiKey> {
  const mode = input.mode ?? 'live';
  const token = `${API_KEY_PREFIXES[mode]}${randomBase62(RANDOM_LENGTH)}`;
  const prefix = token.slice(0, API_KEY_PREFIXES[mode].length + 4);
  const lastFour = token.slice(-4);
  const [row] = await db
    .insert(apiKeys)
    .values({
      teamId: input.teamId,
      name: input.name ?? '',
      keyHash: hashApiKey(token),
      prefix,
      lastFour,
      livemode: mode === 'live',
    })
    .returning();
  if (!row) throw new Error('api key insert returned nothing');
  return {
    id: row.id,
    teamId: row.teamId,
    token,
    prefix,
    lastFour,
    name: row.name,
    mode: modeOf(row.livemode),
    createdAt: row.createdAt,
  };
}

export interface AuthenticatedKey {
  keyId: string;
  /** The key's team and mode: everything the request reads or writes is within it. */
  scope: DataScope;
  /** The team's own read and write budgets per minute; null: the configured defaults. */
  budgets: { read: number | null; write: number | null };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Reads `Authorization: Bearer <key>`; anything else is "no key". */
export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/**
 * The key's team and mode, with one point of the team's budget spent in the same round trip
 * (`spend`, judged by the caller's limiter), or null for an unknown, malformed or revoked key,
 * which spends nothing of any team's budget.
 */
export async function authenticateApiKey(
  db: Queryable,
  token: string,
  clock: Clock,
  spend: BudgetSpend,
): Promise<(AuthenticatedKey & { spent: SpentCounter }) | null> {
  // A token of no key's shape is answered without a look-up.
  // Stryker disable next-line all: equivalent; such a token matches no stored hash, so a look-up answers null as well.
  const prefixed = token.startsWith(API_KEY_PREFIXES.live) || token.startsWith(API_KEY_PREFIXES.test);
  // Stryker disable next-line all: equivalent, as above.
  if (!prefixed || token.length > 200) return null;
  const [row] = await keyLookupSpending(spend.db).execute({
    keyHash: hashApiKey(token),
    keyPrefix: spend.keyPrefix,
    nowIso: spend.nowIso,
    expireIso: spend.expireIso,
  });
  if (!row) return null;
  const now = clock();
  const lastUsedAt = row.last_used_at === null ? null : new Date(row.last_used_at);
  // The check here and the statement's condition each keep the note to once a minute: this one
  // saves the statement, the statement's keeps concurrent requests to one write.
  // Stryker disable next-line all: equivalent alone (the statement's condition still holds the note back).
  if (!lastUsedAt || now.getTime() - lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS) {
    // Stryker disable next-line ArithmeticOperator: equivalent alone (the check above holds it back).
    const staleBefore = new Date(now.getTime() - LAST_USED_GRANULARITY_MS);
    await db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(
        and(eq(apiKeys.id, row.id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore))),
      );
  }
  return {
    keyId: row.id,
    scope: { teamId: row.team_id, livemode: row.livemode },
    budgets: { read: row.rate_limit_read, write: row.rate_limit_write },
    spent: { key: row.spent_key, points: row.spent_points, expire: new Date(row.spent_expire) },
  };
}

/** What names a key in lists and audit entries (never the secret). */
export interface KeyName {
  name: string;
  prefix: string;
  lastFour: string;
}

/**
 * Revokes a key; the next request made with it is refused. Returns the key's name (also for a key
 * revoked before), or null for an unknown key.
 */
export async function revokeApiKey(
  db: Queryable,
  input: { keyId: string; teamId?: string },
  clock: Clock,
): Promise<KeyName | null> {
  const conditions = [eq(apiKeys.id, input.keyId)];
  if (input.teamId) conditions.push(eq(apiKeys.teamId, input.teamId));
  const named = { name: apiKeys.name, prefix: apiKeys.prefix, lastFour: apiKeys.lastFour };
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: clock() })
    .where(and(...conditions, isNull(apiKeys.revokedAt)))
    .returning(named);
  if (revoked) return revoked;
  const [existing] = await db
    .select(named)
    .from(apiKeys)
    .where(and(...conditions))
    .limit(1);
  return existing ?? null;
}

/** A team's keys, newest first (both modes; revoked ones too). */
export function listApiKeys(db: Queryable, teamId: string) {
  return db.select().from(apiKeys).where(eq(apiKeys.teamId, teamId)).orderBy(desc(apiKeys.createdAt));
}

import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, primaryUuid, timestamptz } from './columns';
import { teams } from './teams';
import { oneOf, TEAM_ROLES, type TeamRole } from './values';

/*
 * The console's people and sessions, in the shape better-auth's drizzle adapter expects: the
 * property names are better-auth's field names (camelCase), the columns follow our snake_case.
 * better-auth generates the text ids itself.
 */

export const authUsers = pgTable('auth_users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Stored lower-case by better-auth; unique, because an e-mail is how a person signs in. */
  email: text('email').notNull().unique('auth_users_email_unique'),
  emailVerified: boolean('email_verified').notNull().default(false),
  image: text('image'),
  /** Set for a password the operator's CLI printed: the console asks for a new one first. */
  passwordChangeRequired: boolean('password_change_required').notNull().default(false),
  /** When the CLI's one-time password stops working (7 days after it was printed); null otherwise. */
  oneTimePasswordExpiresAt: timestamptz('one_time_password_expires_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const authSessions = pgTable(
  'auth_sessions',
  {
    id: text('id').primaryKey(),
    /** The cookie's value is this token (signed); looking a session up goes through the unique index. */
    token: text('token').notNull().unique('auth_sessions_token_unique'),
    userId: text('user_id')
      .notNull()
      .references(() => authUsers.id, { onDelete: 'cascade' }),
    expiresAt: timestamptz('expires_at').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // Signing out everywhere and deleting a user walk a user's sessions.
  (t) => [index('auth_sessions_user_idx').on(t.userId)],
);

/** One row per way a user signs in; `providerId = 'credential'` holds the password hash. */
export const authAccounts = pgTable(
  'auth_accounts',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    providerId: text('provider_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => authUsers.id, { onDelete: 'cascade' }),
    accessToken: text('access_token'),
    refreshToken: text('refresh_token'),
    idToken: text('id_token'),
    accessTokenExpiresAt: timestamptz('access_token_expires_at'),
    refreshTokenExpiresAt: timestamptz('refresh_token_expires_at'),
    scope: text('scope'),
    password: text('password'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // Password sign-in finds the credential account of a user.
  (t) => [index('auth_accounts_user_idx').on(t.userId)],
);

/** Short-lived tokens: e-mail sign-in links. */
export const authVerifications = pgTable(
  'auth_verifications',
  {
    id: text('id').primaryKey(),
    identifier: text('identifier').notNull(),
    value: text('value').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // A sign-in link is redeemed by looking its token up.
  (t) => [index('auth_verifications_identifier_idx').on(t.identifier)],
);

/**
 * better-auth's sign-in rate limits (per client address and path), in the database so they hold
 * across app processes.
 */
export const authRateLimits = pgTable('auth_rate_limits', {
  id: text('id').primaryKey().default(sql`gen_random_uuid()::text`),
  key: text('key').notNull().unique('auth_rate_limits_key_unique'),
  count: integer('count').notNull(),
  lastRequest: bigint('last_request', { mode: 'number' }).notNull(),
});

export const teamMembers = pgTable(
  'team_members',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => authUsers.id, { onDelete: 'cascade' }),
    role: text('role').$type<TeamRole>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.userId] }),
    check('team_members_role_check', oneOf(t.role, TEAM_ROLES)),
    // A signed-in user's teams.
    index('team_members_user_idx').on(t.userId),
  ],
);

/**
 * Invitations to join a team, waiting for the invitee to accept them (signed in as that e-mail)
 * for 7 days. Only the token's hash is kept; the link with the token went to the invitee alone.
 */
export const teamInvitations = pgTable(
  'team_invitations',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** The invitee's address, lower-case, as accounts keep theirs. */
    email: text('email').notNull(),
    role: text('role').$type<TeamRole>().notNull(),
    /** Who invited; null once that user's account is deleted (the audit log keeps the name). */
    invitedByUserId: text('invited_by_user_id').references(() => authUsers.id, { onDelete: 'set null' }),
    /** SHA-256 of the link's token, hex; the unique index is how a link finds its invitation. */
    tokenHash: text('token_hash').notNull().unique('team_invitations_token_hash_unique'),
    createdAt: createdAt(),
    expiresAt: timestamptz('expires_at').notNull(),
    acceptedAt: timestamptz('accepted_at'),
    revokedAt: timestamptz('revoked_at'),
  },
  (t) => [
    check('team_invitations_role_check', oneOf(t.role, TEAM_ROLES)),
    // One open invitation per person and team: inviting again replaces it.
    uniqueIndex('team_invitations_open_unique')
      .on(t.teamId, t.email)
      .where(sql`${t.acceptedAt} is null and ${t.revokedAt} is null`),
  ],
);

/** Every console action that changes something: who, what, when, from where. Append-only. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** Null when the operator's CLI acted. Kept as text (no foreign key) so the record outlives the user. */
    actorUserId: text('actor_user_id'),
    actorEmail: text('actor_email').notNull(),
    action: text('action').notNull(),
    /** What was acted on, e.g. the key's or endpoint's id. */
    target: text('target'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    createdAt: createdAt(),
    /*
     * The tamper-evident chain (server/audit/audit-chain.ts), filled by the sealing job a few
     * seconds after the entry is written: its place in the team's chain, what was hashed (the
     * entry with every personal value as an HMAC keyed with the team's evidence key), the hash
     * before it and its own. Null until sealed.
     */
    chainSeq: bigint('chain_seq', { mode: 'number' }),
    sealed: jsonb('sealed').$type<Record<string, unknown>>(),
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (t) => [
    // The console lists a team's log newest first.
    index('audit_log_team_created_idx').on(t.teamId, t.createdAt.desc(), t.id.desc()),
    // The sealing job finds what is left to seal; verification walks a team's chain in order.
    index('audit_log_unsealed_idx').on(t.teamId).where(sql`${t.hash} is null`),
    uniqueIndex('audit_log_team_chain_idx').on(t.teamId, t.chainSeq),
    // A case's entries: its evidence record lists them, and its redaction rewrites them.
    index('audit_log_team_target_idx').on(t.teamId, t.target),
  ],
);

/**
 * Where each team's audit chain stands: the last sealed entry (its place and hash, which the next
 * entry's `prev_hash` names), and, once retention has deleted the chain's start, a signed
 * checkpoint saying where the remaining chain begins.
 */
export const auditChainHeads = pgTable('audit_chain_heads', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  seq: bigint('seq', { mode: 'number' }).notNull().default(0),
  hash: text('hash'),
  /** The place and hash of the last entry retention deleted: the remaining chain's first `prev_hash`. */
  checkpointSeq: bigint('checkpoint_seq', { mode: 'number' }),
  checkpointHash: text('checkpoint_hash'),
  /** The checkpoint signed (a compact JWS of {team, seq, hash}) with the service's EdDSA key. */
  checkpointJws: text('checkpoint_jws'),
});

/**
 * Secrets the service generates for itself on first start, shared by every app process through
 * the database (e.g. the key that signs console session cookies when AUTH_SECRET is unset).
 */
export const appSecrets = pgTable('app_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

import { sql } from 'drizzle-orm';
import { bigint, boolean, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { cases } from './cases';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { teams } from './teams';

/**
 * A passkey a subject saved at the end of a verified case, bound to the team, the mode and the
 * subject's e-mail address, and to the case that enrolled it: a later case of that team and mode
 * may verify the same person by it alone (server/passkeys). Revoking one deletes its row, and so
 * does redacting the case that enrolled it.
 */
export const passkeys = pgTable(
  'passkeys',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    subjectEmail: text('subject_email').notNull(),
    /** The credential's id as the authenticator gave it (base64url): unique across authenticators. */
    credentialId: text('credential_id').notNull().unique('passkeys_credential_id_unique'),
    /** The COSE public key (base64url), never served. */
    publicKey: text('public_key').notNull(),
    /** The authenticator's signature counter as last seen (0 for those that keep none). */
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: text('transports').array().notNull().default(sql`'{}'::text[]`),
    /** `singleDevice` or `multiDevice` (synced), as the authenticator said at enrollment. */
    deviceType: text('device_type').notNull(),
    backedUp: boolean('backed_up').notNull(),
    enrollingCaseId: uuid('enrolling_case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    lastUsedAt: timestamptz('last_used_at'),
  },
  (t) => [index('passkeys_subject_idx').on(t.teamId, t.livemode, t.subjectEmail)],
);

/**
 * A WebAuthn ceremony's challenge, bound to the case it was issued for and to its ceremony, good
 * once and for a few minutes: checking an answer consumes it, so a replayed or another case's
 * answer finds none.
 */
export const passkeyChallenges = pgTable(
  'passkey_challenges',
  {
    challenge: text('challenge').primaryKey(),
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    ceremony: text('ceremony').$type<'registration' | 'authentication'>().notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('passkey_challenges_case_idx').on(t.caseId)],
);

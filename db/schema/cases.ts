import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { teams } from './teams';
import {
  CASE_STATUSES,
  type CaseStatus,
  type Locale,
  NAME_MATCH_MODES,
  type NameMatchMode,
  oneOf,
  STEP_STATES,
  type StepState,
  VENDOR_COPY_KINDS,
  type VendorCopyKind,
  type VerificationMethod,
} from './values';

export const cases = pgTable(
  'cases',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    publicId: text('public_id').notNull().unique('cases_public_id_unique'),
    /** Stored state. An `open` case past `expires_at` reads as expired before the sweep marks it. */
    status: text('status').$type<CaseStatus>().notNull().default('open'),
    subjectEmail: text('subject_email').notNull(),
    /** As the team gave it; a case given none takes the ID document's name. */
    subjectName: text('subject_name'),
    /** The name on the ID document, once checked (erased by redaction). */
    documentName: text('document_name'),
    /** What a document showing another name than expected does to the case (NAME_MATCH_MODES). */
    nameMatch: text('name_match').$type<NameMatchMode>().notNull().default('enforce'),
    /** The language the subject is addressed in (a supported locale), or null: the team's default then. */
    locale: text('locale').$type<Locale>(),
    notes: text('notes').notNull().default(''),
    /** Who the case is about in the system that asked for it: an identity provider's `login_hint`; null otherwise. */
    externalRef: text('external_ref'),
    failureReason: text('failure_reason'),
    createdAt: createdAt(),
    expiresAt: timestamptz('expires_at').notNull(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
    /** When the team canceled the open case (its status is then `expired`). */
    canceledAt: timestamptz('canceled_at'),
    /** When the subject's personal data was erased; the case keeps its ids, status and results. */
    redactedAt: timestamptz('redacted_at'),
    /** Times the case's links were sent again, and the last time (resend's limits). */
    resendCount: integer('resend_count').notNull().default(0),
    lastResentAt: timestamptz('last_resent_at'),
    /** Whether the closed case offers its subject to save a passkey for later re-verification. */
    offerPasskey: boolean('offer_passkey').notNull().default(false),
    /** When the subject said no to that offer: it is never made again on this case. */
    passkeyOfferDeclinedAt: timestamptz('passkey_offer_declined_at'),
  },
  (t) => [
    check('cases_status_check', oneOf(t.status, CASE_STATUSES)),
    check('cases_name_match_check', oneOf(t.nameMatch, NAME_MATCH_MODES)),
    // Keyset pagination: every list query walks one of these newest-first, (created_at, id) being
    // the cursor, so a page costs the same at a thousand cases or a million.
    index('cases_team_created_idx').on(t.teamId, t.livemode, t.createdAt.desc(), t.id.desc()),
    index('cases_team_status_created_idx').on(
      t.teamId,
      t.livemode,
      t.status,
      t.createdAt.desc(),
      t.id.desc(),
    ),
    index('cases_team_email_created_idx').on(
      t.teamId,
      t.livemode,
      t.subjectEmail,
      t.createdAt.desc(),
      t.id.desc(),
    ),
    // The expiry sweep finds open cases past their deadline without scanning closed ones.
    index('cases_open_expires_idx').on(t.expiresAt).where(sql`${t.status} = 'open'`),
  ],
);

/**
 * One row per requested verification method of a case. Method-specific settings that are not
 * secret (question text, manager name) and secrets (the hashed answer) live in `settings`.
 */
export const caseSteps = pgTable(
  'case_steps',
  {
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    method: text('method').$type<VerificationMethod>().notNull(),
    state: text('state').$type<StepState>().notNull().default('pending'),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    verifiedAt: timestamptz('verified_at'),
    /** When the step failed the case (kept through redaction, which moves `updated_at`). */
    failedAt: timestamptz('failed_at'),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.caseId, t.method] }),
    check('case_steps_state_check', oneOf(t.state, STEP_STATES)),
  ],
);

/**
 * A copy of the case's personal data that a vendor keeps (see VENDOR_COPY_KINDS), by the vendor's
 * id for it: the only way to erase it later. Kept while the copy exists at the vendor; the
 * erasure job that a redaction queues deletes the row once the vendor has erased the copy.
 */
export const vendorCopies = pgTable(
  'vendor_copies',
  {
    id: primaryUuid(),
    caseId: uuid('case_id')
      .notNull()
      .references(() => cases.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<VendorCopyKind>().notNull(),
    vendorId: text('vendor_id').notNull(),
    /** When the vendor accepted the erasure and is still carrying it out (Stripe: up to four days). */
    erasureRequestedAt: timestamptz('erasure_requested_at'),
    createdAt: createdAt(),
  },
  (t) => [
    check('vendor_copies_kind_check', oneOf(t.kind, VENDOR_COPY_KINDS)),
    // A session reused by a second visit is recorded once.
    unique('vendor_copies_kind_vendor_id_unique').on(t.kind, t.vendorId),
    // Redaction and the erasure job read a case's copies.
    index('vendor_copies_case_idx').on(t.caseId),
  ],
);

/**
 * What a case's evidence record cites that redaction erases (the subject's address, each step's
 * evidence reference), kept at redaction with every personal value as an HMAC under the team's
 * evidence key (server/evidence): later records still prove what was checked to whoever holds the
 * value and the key. Apart from the case's row, which every reader of a case loads.
 */
export const redactedEvidence = pgTable('redacted_evidence', {
  caseId: uuid('case_id')
    .primaryKey()
    .references(() => cases.id, { onDelete: 'cascade' }),
  evidence: jsonb('evidence').$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
});

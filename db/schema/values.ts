/**
 * The values each status-like column may hold, listed once: the columns are typed from them
 * (`$type`), their CHECK constraints are built from them (`oneOf`), and the domains and the API
 * take the types and lists from here, so no code casts a status.
 */
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';

/** A CHECK constraint's condition: `column in ('a', 'b', …)`, with the values written as SQL text. */
export function oneOf(column: SQLWrapper, values: readonly string[]): SQL {
  return sql`${column} in (${sql.raw(values.map((v) => `'${v}'`).join(', '))})`;
}

/** A case's stored status (an `open` case past `expires_at` reads as expired before the sweep). */
export const CASE_STATUSES = ['open', 'closed', 'failed', 'expired'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

/** Every verification method, in the order the API lists them. */
export const VERIFICATION_METHODS = [
  'email',
  'sms',
  'government_id',
  'selfie',
  'custom_question',
  'manager',
  'passkey',
] as const;
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];

/**
 * What a case does when the name on the ID document is not the name it expects (its subject_name,
 * or the names an identity provider sent): `enforce` fails it (`name_mismatch`), `record` keeps
 * the mismatch on the case and lets it close.
 */
export const NAME_MATCH_MODES = ['enforce', 'record'] as const;
export type NameMatchMode = (typeof NAME_MATCH_MODES)[number];

export const STEP_STATES = ['pending', 'verified', 'failed'] as const;
export type StepState = (typeof STEP_STATES)[number];

export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'dead_letter'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const MAIL_STATUSES = ['queued', 'sent', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/**
 * The copies of a case's personal data that a vendor keeps, by the vendor's own object type: a
 * Stripe Identity VerificationSession (the ID and selfie images, the name read) and a Twilio
 * message (the phone number and the text). Redaction erases them through the vendor's API.
 */
export const VENDOR_COPY_KINDS = ['stripe.identity.verification_session', 'twilio.message'] as const;
export type VendorCopyKind = (typeof VENDOR_COPY_KINDS)[number];

export const TEAM_ROLES = ['owner', 'admin', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/**
 * A console CSV import: `draft` while its owner looks at the checked rows, `queued` once confirmed
 * (the worker's job is queued), `running` from its first written chunk, then `succeeded` or
 * `canceled`.
 */
export const CASE_IMPORT_STATUSES = ['draft', 'queued', 'running', 'succeeded', 'canceled'] as const;
export type CaseImportStatus = (typeof CASE_IMPORT_STATUSES)[number];

/**
 * The languages the subject's pages, mails and texts are written in (decisions: "Languages and
 * branding"): what a case's `locale` and a team's default locale hold.
 */
export const SUPPORTED_LOCALES = [
  'en',
  'de',
  'fr',
  'es',
  'pt-BR',
  'it',
  'nl',
  'pl',
  'ja',
  'ko',
  'zh-CN',
  'ar',
] as const;
export type Locale = (typeof SUPPORTED_LOCALES)[number];

/** What the service signs with: EdDSA (Ed25519) for evidence, RS256 for ID tokens. */
export const SIGNING_ALGORITHMS = ['EdDSA', 'RS256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

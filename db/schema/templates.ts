import { boolean, check, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { teams } from './teams';
import { type Locale, NAME_MATCH_MODES, type NameMatchMode, oneOf, type VerificationMethod } from './values';

/**
 * A team's named set of verification methods with their settings (server/templates): a case
 * names one instead of listing methods, and an identity provider's flow picks one. A template
 * belongs to a mode like the cases it opens: a test key (or test client) sees and changes only
 * test templates, so nothing done with a test key can change how live cases are verified.
 */
export const verificationTemplates = pgTable(
  'verification_templates',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    /** How cases and identity-provider scopes (`idv_flow_<name>`) name it. */
    name: text('name').notNull(),
    /** The methods it requests, as a create body's `verification_methods` says them. */
    methods: jsonb('methods').$type<Partial<Record<VerificationMethod, boolean>>>().notNull(),
    /**
     * The step settings it gives every case, as creation makes them (a custom question's answer
     * only as its salted hash): per method, only those it sets; each case gives the rest.
     */
    settings: jsonb('settings')
      .$type<Partial<Record<VerificationMethod, Record<string, unknown>>>>()
      .notNull(),
    /** The language its cases' subjects are addressed in, unless a case names its own. */
    locale: text('locale').$type<Locale>(),
    /** Its cases' name_match, unless a case gives its own. */
    nameMatch: text('name_match').$type<NameMatchMode>().notNull().default('enforce'),
    /** Whether its cases offer a passkey once closed, unless a case says otherwise. */
    offerPasskey: boolean('offer_passkey').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // A case names its template by name, within its team and mode.
  (t) => [
    unique('verification_templates_team_mode_name_unique').on(t.teamId, t.livemode, t.name),
    check('verification_templates_name_match_check', oneOf(t.nameMatch, NAME_MATCH_MODES)),
  ],
);

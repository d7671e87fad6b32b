import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { cases } from './cases';
import { createdAt, livemode, timestamptz } from './columns';
import { teams } from './teams';
import { verificationTemplates } from './templates';

/**
 * A relying party of the service's OpenID provider (server/oidc): an identity provider such as
 * Okta, registered by a team, whose flows open that team's cases in the client's mode.
 */
export const oidcClients = pgTable(
  'oidc_clients',
  {
    /** The `client_id`: `vouch_client_` and 24 random base62 characters. */
    id: text('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** The mode of the cases its flows open: test unless the team chose live. */
    livemode: livemode().default(false),
    name: text('name').notNull(),
    /** Where authorization answers may go, each compared exactly. */
    redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
    /** The template its flows run without an `idv_flow_<name>` scope; null: such a flow is refused. */
    defaultTemplateId: uuid('default_template_id').references(() => verificationTemplates.id, {
      onDelete: 'set null',
    }),
    /** SHA-256 (hex) of the client secret: the secret itself is shown once. */
    secretHash: text('secret_hash').notNull(),
    /** The secret's last four characters, for the console to tell secrets apart. */
    secretHint: text('secret_hint').notNull(),
    /** The secret before the last rotation, accepted until `previous_secret_expires_at`. */
    previousSecretHash: text('previous_secret_hash'),
    previousSecretExpiresAt: timestamptz('previous_secret_expires_at'),
    createdAt: createdAt(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  // The console and the CLI list a team's clients.
  (t) => [index('oidc_clients_team_idx').on(t.teamId)],
);

/**
 * One identity provider's verification flow (server/oidc): its pushed authorization request
 * (`request_uri`, single use within 60 s), the case its authorization opened, and the code that
 * hands the verdict back (single use within 60 s, kept as its hash).
 */
export const oidcFlows = pgTable(
  'oidc_flows',
  {
    /** The request_uri's random part (`urn:ietf:params:oauth:request_uri:<id>`). */
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => oidcClients.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** The pushed request as checked: redirect_uri, state, nonce, PKCE challenge, login_hint, the claims asked for, the template. */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    requestExpiresAt: timestamptz('request_expires_at').notNull(),
    /** When the browser brought the request_uri to authorize (it is then spent). */
    authorizedAt: timestamptz('authorized_at'),
    /** The case the authorization opened. */
    caseId: uuid('case_id').references(() => cases.id, { onDelete: 'set null' }),
    /**
     * SHA-256 (hex) of the secret that binds the flow to the browser that brought the request
     * (its cookie on the case's path): only that browser may take the ID step and carry the code.
     */
    browserBindingHash: text('browser_binding_hash'),
    /** When that browser took its cookie (once: the link that hands it over works one time). */
    boundAt: timestamptz('bound_at'),
    /** SHA-256 (hex) of the authorization code handed back, its deadline, and when it was redeemed. */
    codeHash: text('code_hash'),
    codeExpiresAt: timestamptz('code_expires_at'),
    codeUsedAt: timestamptz('code_used_at'),
    createdAt: createdAt(),
  },
  (t) => [
    // The token endpoint finds a flow by its code; a case's page by its case.
    index('oidc_flows_code_idx').on(t.codeHash),
    index('oidc_flows_case_idx').on(t.caseId),
  ],
);

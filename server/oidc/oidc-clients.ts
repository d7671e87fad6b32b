import { createHash, timingSafeEqual } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { oidcClients, verificationTemplates } from '@/db/schema';
import { AppError } from '@/server/platform/errors';
import { randomBase62 } from '@/server/platform/ids';
import { findTemplateByName } from '@/server/templates/templates';
import { REDIRECT_URI_LIMITS, redirectUriProblem } from './redirect-uris';

export type OidcClientRow = typeof oidcClients.$inferSelect;

/** A client with the name of its default template (what the console, the CLI and the flows read). */
export interface OidcClient extends OidcClientRow {
  defaultTemplate: string | null;
}

export const CLIENT_ID_PREFIX = 'vouch_client_';
const CLIENT_ID = /^vouch_client_[0-9A-Za-z]{24}$/;

/** Whether `text` has a client id's shape: anything else (a NUL from a header, say) names no client. */
export function isClientId(text: string): boolean {
  return CLIENT_ID.test(text);
}
const SECRET_PREFIX = 'vouch_secret_';

/** How many clients a team may register. */
export const CLIENT_LIMIT = 20;

/** The longest a rotated secret stays valid beside the new one. */
export const MAX_SECRET_GRACE_SECONDS = 30 * 86_400;

function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(): { secret: string; hash: string; hint: string } {
  const secret = `${SECRET_PREFIX}${randomBase62(40)}`;
  return { secret, hash: secretHash(secret), hint: secret.slice(-4) };
}

export interface ClientSettings {
  name: string;
  redirectUris: string[];
  /** The default template's name, or null for none. */
  defaultTemplate: string | null;
  livemode: boolean;
}

/** The settings checked: each redirect URI (naming the first wrong one) and the template named (in the client's mode). */
async function checkedSettings(db: Queryable, teamId: string, settings: ClientSettings) {
  const uris = [...new Set(settings.redirectUris)];
  if (uris.length === 0) throw new AppError('VALIDATION_ERROR', 'redirect_uris: give at least one');
  if (uris.length > REDIRECT_URI_LIMITS.count) {
    throw new AppError('VALIDATION_ERROR', `redirect_uris: at most ${REDIRECT_URI_LIMITS.count}`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri, settings.livemode);
    if (problem) throw new AppError('VALIDATION_ERROR', `redirect_uris: ${uri} ${problem}`);
  }
  let defaultTemplateId: string | null = null;
  if (settings.defaultTemplate !== null) {
    // A client names templates of its own mode: a test template never runs a live client's flows.
    const template = await findTemplateByName(
      db,
      { teamId, livemode: settings.livemode },
      settings.defaultTemplate,
    );
    if (!template) {
      throw new AppError(
        'VALIDATION_ERROR',
        `default_template: your team has no ${settings.livemode ? 'live' : 'test'} template named "${settings.defaultTemplate}"`,
      );
    }
    defaultTemplateId = template.id;
  }
  return { name: settings.name, redirectUris: uris, livemode: settings.livemode, defaultTemplateId };
}

const withTemplate = {
  client: oidcClients,
  templateName: verificationTemplates.name,
};

function joined(rows: Array<{ client: OidcClientRow; templateName: string | null }>): OidcClient[] {
  return rows.map(({ client, templateName }) => ({ ...client, defaultTemplate: templateName }));
}

export async function listClients(db: Queryable, teamId: string): Promise<OidcClient[]> {
  return joined(
    await db
      .select(withTemplate)
      .from(oidcClients)
      .leftJoin(verificationTemplates, eq(verificationTemplates.id, oidcClients.defaultTemplateId))
      .where(eq(oidcClients.teamId, teamId))
      .orderBy(asc(oidcClients.createdAt)),
  );
}

/** A client by its id, whichever team's (null for none): how a flow finds the client that calls. */
export async function findClient(db: Queryable, clientId: string): Promise<OidcClient | null> {
  // Anything but an id's shape (a NUL from a Basic header, say) names no client.
  if (!isClientId(clientId)) return null;
  const [row] = joined(
    await db
      .select(withTemplate)
      .from(oidcClients)
      .leftJoin(verificationTemplates, eq(verificationTemplates.id, oidcClients.defaultTemplateId))
      .where(eq(oidcClients.id, clientId)),
  );
  return row ?? null;
}

/** The team's client, or 404 (another team's looks the same as none). */
export async function findTeamClientOrFail(
  db: Queryable,
  teamId: string,
  clientId: string,
): Promise<OidcClient> {
  const client = await findClient(db, clientId);
  if (!client || client.teamId !== teamId)
    throw new AppError('NOT_FOUND', 'No identity-provider client with this id.');
  return client;
}

/** Registers a client; answers it with its secret, which is kept only as a hash from here on. */
export async function createClient(
  db: Queryable,
  teamId: string,
  settings: ClientSettings,
  now: Date,
): Promise<{ client: OidcClient; secret: string }> {
  const existing = await listClients(db, teamId);
  if (existing.length >= CLIENT_LIMIT) {
    throw new AppError(
      'VALIDATION_ERROR',
      `A team can register at most ${CLIENT_LIMIT} identity-provider clients.`,
    );
  }
  const values = await checkedSettings(db, teamId, settings);
  const secret = newSecret();
  const [row] = await db
    .insert(oidcClients)
    .values({
      id: `${CLIENT_ID_PREFIX}${randomBase62(24)}`,
      teamId,
      ...values,
      secretHash: secret.hash,
      secretHint: secret.hint,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error('client insert returned nothing');
  return { client: { ...row, defaultTemplate: settings.defaultTemplate }, secret: secret.secret };
}

/**
 * A new secret for the client, answered once; the one it replaces stays valid for `graceSeconds`
 * (0: at once no more), so the identity provider's configuration can be changed without a gap.
 */
export async function rotateClientSecret(
  db: Queryable,
  client: OidcClient,
  graceSeconds: number,
  now: Date,
): Promise<{ client: OidcClient; secret: string }> {
  const secret = newSecret();
  const [row] = await db
    .update(oidcClients)
    .set({
      secretHash: secret.hash,
      secretHint: secret.hint,
      previousSecretHash: graceSeconds > 0 ? client.secretHash : null,
      previousSecretExpiresAt: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
      updatedAt: now,
    })
    .where(eq(oidcClients.id, client.id))
    .returning();
  if (!row) throw new AppError('NOT_FOUND', 'No identity-provider client with this id.');
  return { client: { ...row, defaultTemplate: client.defaultTemplate }, secret: secret.secret };
}

export async function deleteClient(db: Queryable, client: OidcClient): Promise<void> {
  await db
    .delete(oidcClients)
    .where(and(eq(oidcClients.id, client.id), eq(oidcClients.teamId, client.teamId)));
}

function sameHash(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/**
 * Whether `secret` is the client's: its current secret, or the one before it within its grace
 * period. Compared as SHA-256 hashes in constant time, each candidate every time.
 */
export function secretMatches(client: OidcClientRow, secret: string, now: Date): boolean {
  const offered = secretHash(secret);
  const current = sameHash(offered, client.secretHash);
  const previous = client.previousSecretHash !== null && sameHash(offered, client.previousSecretHash);
  const inGrace = client.previousSecretExpiresAt !== null && client.previousSecretExpiresAt > now;
  return current || (previous && inGrace);
}

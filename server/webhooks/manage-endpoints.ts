import { and, asc, count, eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { teams, webhookEndpoints } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { isUuid } from '@/server/platform/ids';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { createPingDelivery, resumeHeldDeliveries } from '@/server/platform/outbox/delivery-state';
import { recordEvent, SUBSCRIBABLE_EVENT_TYPES } from '@/server/platform/outbox/record-events';
import { literalAddress, localOnlyHostReason, refusedAddressReason } from './destination-guard';
import { newSigningSecret } from './signature';

/** Endpoints per team: one more answers ENDPOINT_LIMIT_REACHED. */
export const MAX_ENDPOINTS_PER_TEAM = 10;

export interface EndpointPolicy {
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS: local development and tests point endpoints at a receiver on
   * this machine, which cannot listen on 443; with the flag on, any port is accepted.
   */
  allowPrivateNetworks: boolean;
}

/** What a developer whose receiver runs on their own machine should do instead. */
const LOCAL_DEVELOPMENT_HINT =
  'To receive webhooks on your own machine, run `npm run listen -- --forward-to http://localhost:PORT/path` ' +
  '(it follows the events API and forwards each event, signed), or run the server itself with ' +
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.';

/**
 * HTTPS on the standard port, a host, no credentials in the URL, and, if the host is an IP
 * address, a public one; a host name that can never be public (localhost, `.local`, `.internal`,
 * a name without a dot…) is refused from the name alone. Other host names are checked at delivery
 * time, on the address they resolve to.
 */
export function validateEndpointUrl(raw: string | undefined, policy: EndpointPolicy): string {
  if (raw === undefined || raw.length > 2048)
    throw new AppError('INVALID_URL', 'url: an HTTPS URL is required.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('INVALID_URL', 'url: not a valid URL.');
  }
  if (url.protocol !== 'https:') {
    throw new AppError('INVALID_URL', `url: must use https. ${LOCAL_DEVELOPMENT_HINT}`);
  }
  if (url.username || url.password) throw new AppError('INVALID_URL', 'url: must not contain credentials.');
  if (!url.hostname) throw new AppError('INVALID_URL', 'url: must name a host.');
  // The host before the port: `https://localhost:4000/` is told that no port would do.
  if (!policy.allowPrivateNetworks) {
    const address = literalAddress(url);
    if (address !== null && refusedAddressReason(address) !== null) {
      // The address is not repeated back: the caller knows what they sent.
      throw new AppError(
        'INVALID_URL',
        'url: points to a private, loopback or otherwise non-public address; webhooks can only reach ' +
          `public internet addresses. ${LOCAL_DEVELOPMENT_HINT}`,
      );
    }
    const localOnly = address === null ? localOnlyHostReason(url.hostname) : null;
    if (localOnly !== null) {
      throw new AppError(
        'INVALID_URL',
        `url: names a host no public address can answer for (${localOnly}); webhooks can only reach ` +
          `public internet addresses. ${LOCAL_DEVELOPMENT_HINT}`,
      );
    }
    if (url.port !== '') {
      throw new AppError(
        'INVALID_URL',
        `url: must use the standard HTTPS port (443). ${LOCAL_DEVELOPMENT_HINT}`,
      );
    }
  }
  return url.toString();
}

/** One or more of the subscribable types, each once. */
export function validateEvents(raw: string[] | undefined): string[] {
  if (!raw || raw.length === 0)
    throw new AppError('INVALID_EVENTS', 'events: at least one event type is required.');
  const unknown = raw.filter((type) => !(SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) {
    throw new AppError(
      'INVALID_EVENTS',
      `events: unknown event type(s) ${unknown.join(', ')}; use ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}.`,
    );
  }
  return [...new Set(raw)];
}

/** The scope's conditions on the endpoints table: one team, one mode. */
function inScope(scope: DataScope) {
  return and(eq(webhookEndpoints.teamId, scope.teamId), eq(webhookEndpoints.livemode, scope.livemode));
}

/**
 * The endpoint `id` names for this team and mode, or 404 NOT_FOUND: an unknown id, another team's
 * endpoint and a malformed id look the same; the team's other mode's endpoint says so
 * (notFoundInScope).
 */
export async function requireEndpoint(db: Queryable, scope: DataScope, id: string) {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(webhookEndpoints)
        .where(and(inScope(scope), eq(webhookEndpoints.id, id)))
    : [];
  if (!row) {
    throw await notFoundInScope(db, webhookEndpoints, scope, isUuid(id) ? id : null, {
      noun: 'webhook endpoint',
    });
  }
  return row;
}

export async function createEndpoint(
  db: Queryable,
  scope: DataScope,
  input: { url?: string; events?: string[]; description?: string },
  deps: { clock: Clock } & EndpointPolicy,
) {
  const url = validateEndpointUrl(input.url, deps);
  const events = validateEvents(input.events);
  const now = deps.clock();
  return db.transaction(async (tx) => {
    // The team row lock serialises creates, so two at once cannot both take the tenth place.
    // Each mode has its own places: test endpoints never crowd out live ones.
    await tx.select({ id: teams.id }).from(teams).where(eq(teams.id, scope.teamId)).for('update');
    const [existing] = await tx.select({ n: count() }).from(webhookEndpoints).where(inScope(scope));
    if ((existing?.n ?? 0) >= MAX_ENDPOINTS_PER_TEAM) throw new AppError('ENDPOINT_LIMIT_REACHED');
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({
        teamId: scope.teamId,
        livemode: scope.livemode,
        url,
        events,
        description: input.description ?? '',
        secret: newSigningSecret(),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw new Error('endpoint insert returned nothing');
    return row;
  });
}

export async function listEndpoints(db: Queryable, scope: DataScope) {
  return db
    .select()
    .from(webhookEndpoints)
    .where(inScope(scope))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function getEndpoint(db: Queryable, scope: DataScope, id: string) {
  return requireEndpoint(db, scope, id);
}

/**
 * PATCH. `is_active: true` resets the failure count, clears `disabled_at` and queues the
 * deliveries held while the endpoint was off; `false` holds new attempts.
 */
export async function updateEndpoint(
  db: Queryable,
  scope: DataScope,
  id: string,
  changes: { url?: string; events?: string[]; description?: string; is_active?: boolean },
  deps: { clock: Clock; jobs: JobProducer } & EndpointPolicy,
) {
  const url = changes.url === undefined ? undefined : validateEndpointUrl(changes.url, deps);
  const events = changes.events === undefined ? undefined : validateEvents(changes.events);
  const now = deps.clock();
  return db.transaction(async (tx) => {
    const current = await requireEndpoint(tx, scope, id);
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        ...(url !== undefined ? { url } : {}),
        ...(events !== undefined ? { events } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.is_active === true ? { isActive: true, consecutiveFailures: 0, disabledAt: null } : {}),
        ...(changes.is_active === false ? { isActive: false } : {}),
        updatedAt: now,
      })
      .where(eq(webhookEndpoints.id, current.id))
      .returning();
    if (!row) throw new AppError('NOT_FOUND', 'No webhook endpoint with this id.');
    if (changes.is_active === true && !current.isActive)
      await resumeHeldDeliveries(tx, deps.jobs, row.id, now);
    return row;
  });
}

export async function deleteEndpoint(db: Queryable, scope: DataScope, id: string): Promise<void> {
  const endpoint = await requireEndpoint(db, scope, id);
  await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
}

/** A new secret, effective for the very next attempt (attempts read the secret when they start). */
export async function rotateEndpointSecret(db: Queryable, scope: DataScope, id: string, clock: Clock) {
  const endpoint = await requireEndpoint(db, scope, id);
  const [row] = await db
    .update(webhookEndpoints)
    .set({ secret: newSigningSecret(), updatedAt: clock() })
    .where(eq(webhookEndpoints.id, endpoint.id))
    .returning();
  if (!row) throw new AppError('NOT_FOUND', 'No webhook endpoint with this id.');
  return row;
}

/**
 * A `ping` event and its one delivery to this endpoint, attempted even when the endpoint is
 * disabled so an admin can check a fix before reactivating.
 */
export async function sendTestPing(
  db: Queryable,
  scope: DataScope,
  id: string,
  deps: { clock: Clock; jobs: JobProducer },
) {
  const endpoint = await requireEndpoint(db, scope, id);
  const now = deps.clock();
  return db.transaction(async (tx) => {
    const event = await recordEvent(tx, deps.jobs, {
      scope,
      type: 'ping',
      data: { endpoint_id: endpoint.id, message: 'ping' },
      now,
    });
    const delivery = await createPingDelivery(tx, deps.jobs, {
      teamId: scope.teamId,
      livemode: scope.livemode,
      endpointId: endpoint.id,
      eventId: event.id,
      body: event.body,
      now,
    });
    return delivery;
  });
}

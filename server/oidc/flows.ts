import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { oidcFlows } from '@/db/schema';
import { randomBase62 } from '@/server/platform/ids';
import { isClientId } from './oidc-clients';
import type { VerifiedClaimsEntry } from './verified-claims-request';

/** How long a pushed request and an authorization code may wait (Okta's `expires_in: 60`). */
export const REQUEST_URI_SECONDS = 60;
export const CODE_SECONDS = 60;

/** The `request_uri` of a flow (RFC 9126 §2.2). */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** A pushed request as it was checked: what authorize and token need of it. */
export interface PushedRequest {
  redirectUri: string;
  state: string | null;
  nonce: string | null;
  codeChallenge: string;
  scope: string;
  loginHint: string;
  subjectEmail: string;
  locale: string | null;
  template: string;
  verifiedClaims: VerifiedClaimsEntry[];
}

/** Records a checked pushed request; answers its request_uri. */
export async function insertFlow(
  db: Queryable,
  input: { clientId: string; teamId: string; request: PushedRequest; now: Date },
): Promise<string> {
  const id = randomBase62(32);
  await db.insert(oidcFlows).values({
    id,
    clientId: input.clientId,
    teamId: input.teamId,
    request: input.request as unknown as Record<string, unknown>,
    requestExpiresAt: new Date(input.now.getTime() + REQUEST_URI_SECONDS * 1000),
    createdAt: input.now,
  });
  return `${REQUEST_URI_PREFIX}${id}`;
}

export type FlowRow = typeof oidcFlows.$inferSelect;

/** The request_uri's flow id, or null for anything else. */
export function flowIdOf(requestUri: string): string | null {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return null;
  const id = requestUri.slice(REQUEST_URI_PREFIX.length);
  return /^[0-9A-Za-z]{32}$/.test(id) ? id : null;
}

/**
 * Spends a pushed request: the first authorization that brings it takes it (one statement, so two
 * at once cannot both), whether or not it is still in time; null when it is unknown, spent, or
 * brought with another client's client_id (Okta's authorize carries none; openid-client's does).
 */
export async function spendRequest(
  db: Queryable,
  id: string,
  clientId: string | null,
  now: Date,
): Promise<FlowRow | null> {
  // A client_id of no client's shape spends nothing (and never reaches a query).
  if (clientId !== null && !isClientId(clientId)) return null;
  const [row] = await db
    .update(oidcFlows)
    .set({ authorizedAt: now })
    .where(
      and(
        eq(oidcFlows.id, id),
        isNull(oidcFlows.authorizedAt),
        // A client_id that is not the pushing client's spends nothing (RFC 9126 §4).
        clientId === null ? undefined : eq(oidcFlows.clientId, clientId),
      ),
    )
    .returning();
  return row ?? null;
}

/**
 * Attaches the case the authorization opened, and binds the flow to the browser that brought the
 * request: answers the secret that browser is handed (once, by bindBrowser), kept here as its hash.
 */
export async function attachCase(db: Queryable, id: string, caseId: string): Promise<string> {
  const binding = randomBase62(32);
  await db
    .update(oidcFlows)
    .set({ caseId, browserBindingHash: bindingHash(binding) })
    .where(eq(oidcFlows.id, id));
  return binding;
}

/** The parameter of the one-time link that hands the browser its binding (authorize sends it there). */
export const FLOW_BINDING_PARAM = 'binding';

/** The case's link that hands a browser the flow's binding, under the pages' origin. */
export function flowBeginUrl(pageBase: string, publicId: string, binding: string): string {
  return `${pageBase}/v/${publicId}/begin?${FLOW_BINDING_PARAM}=${binding}`;
}

function bindingHash(binding: string): string {
  return createHash('sha256').update(binding).digest('hex');
}

/** Whether `binding` (a browser's cookie, or the link handing it over) is the flow's. */
export function holdsBinding(flow: FlowRow, binding: string | null): boolean {
  if (!binding || !flow.browserBindingHash) return false;
  const offered = Buffer.from(bindingHash(binding), 'hex');
  const kept = Buffer.from(flow.browserBindingHash, 'hex');
  return offered.length === kept.length && timingSafeEqual(offered, kept);
}

/**
 * How long after authorize its link into the case may bind a browser: the browser follows it at
 * once, so a link forwarded to someone else (a phisher's, say) has long stopped working.
 */
export const BEGIN_LINK_SECONDS = 120;

/**
 * Hands the flow's binding to a browser, once and within BEGIN_LINK_SECONDS of authorize: the
 * first visit of the link that carries it takes it (one statement, so two at once cannot both).
 * Whether this visit did.
 */
export async function bindBrowser(
  db: Queryable,
  flow: FlowRow,
  binding: string,
  now: Date,
): Promise<boolean> {
  if (!holdsBinding(flow, binding)) return false;
  if (!flow.authorizedAt || now.getTime() - flow.authorizedAt.getTime() > BEGIN_LINK_SECONDS * 1000) {
    return false;
  }
  const rows = await db
    .update(oidcFlows)
    .set({ boundAt: now })
    .where(and(eq(oidcFlows.id, flow.id), isNull(oidcFlows.boundAt)))
    .returning({ id: oidcFlows.id });
  return rows.length > 0;
}

/** The flow's request as it was pushed. */
export function pushedRequest(flow: FlowRow): PushedRequest {
  return flow.request as unknown as PushedRequest;
}

/**
 * The relying party's redirect URI with the answer (RFC 6749 §4.1.2): a code, or an error, with
 * its state and the issuer (RFC 9207).
 */
export function relyingPartyRedirect(
  request: PushedRequest,
  issuer: string,
  answer: { code: string } | { error: string; error_description: string },
): string {
  const url = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(answer)) url.searchParams.set(name, value);
  if (request.state !== null) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/** How long after its authorization a flow's case page sends the browser back (the case's 30 minutes, and a margin). */
export const FLOW_RETURN_SECONDS = 40 * 60;

/** The flow that opened a case, if an identity provider's did. */
export async function flowOfCase(db: Queryable, caseId: string): Promise<FlowRow | null> {
  const [row] = await db.select().from(oidcFlows).where(eq(oidcFlows.caseId, caseId));
  return row ?? null;
}

function codeHash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

/** A code as derived for a flow and its deadline: the same inputs, the same code. */
function derivedCode(key: Uint8Array, flowId: string, expiresAt: Date): string {
  return createHmac('sha256', key)
    .update(`oidc-code:${flowId}:${expiresAt.toISOString()}`)
    .digest('base64url');
}

/**
 * The flow's authorization code, valid 60 s, kept only as its hash: derived (HMAC under the team's
 * internal key) from the flow and its deadline, so every visit within those 60 s answers the same
 * code (a reload or a second tab does not void the one on its way), and a later visit a new one.
 * Null once a code was redeemed: a flow hands over one verdict.
 */
export async function issueCode(
  db: Queryable,
  flow: FlowRow,
  key: Uint8Array,
  now: Date,
): Promise<string | null> {
  if (flow.codeUsedAt) return null;
  if (flow.codeHash && flow.codeExpiresAt && flow.codeExpiresAt > now) {
    return derivedCode(key, flow.id, flow.codeExpiresAt);
  }
  const expiresAt = new Date(now.getTime() + CODE_SECONDS * 1000);
  const code = derivedCode(key, flow.id, expiresAt);
  const [row] = await db
    .update(oidcFlows)
    .set({ codeHash: codeHash(code), codeExpiresAt: expiresAt })
    .where(and(eq(oidcFlows.id, flow.id), isNull(oidcFlows.codeUsedAt)))
    .returning({ id: oidcFlows.id });
  return row ? code : null;
}

/** The flow of a code still to redeem (not redeemed, within its 60 s), or null. */
export async function flowOfCode(db: Queryable, code: string, now: Date): Promise<FlowRow | null> {
  const [row] = await db
    .select()
    .from(oidcFlows)
    .where(
      and(
        eq(oidcFlows.codeHash, codeHash(code)),
        isNull(oidcFlows.codeUsedAt),
        gt(oidcFlows.codeExpiresAt, now),
      ),
    );
  return row ?? null;
}

/**
 * Redeems a flow's code, once: one statement, so of two redemptions at once only one takes it.
 * Whether this one did.
 */
export async function redeemCode(db: Queryable, flow: FlowRow, now: Date): Promise<boolean> {
  const rows = await db
    .update(oidcFlows)
    .set({ codeUsedAt: now })
    .where(
      and(
        eq(oidcFlows.id, flow.id),
        eq(oidcFlows.codeHash, flow.codeHash ?? ''),
        isNull(oidcFlows.codeUsedAt),
      ),
    )
    .returning({ id: oidcFlows.id });
  return rows.length > 0;
}

import type { Queryable } from '@/db/client';
import { oidcFlows } from '@/db/schema';
import { randomBase62 } from '@/server/platform/ids';
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

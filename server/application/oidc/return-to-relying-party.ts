import type { Db } from '@/db/client';
import { type CaseRecord, effectiveStatus } from '@/server/cases/case-record';
import { issueCode, pushedRequest, relyingPartyRedirect } from '@/server/oidc/flows';
import { teamHmacKey } from '@/server/teams/team-secrets';
import type { ProviderFlow } from './provider-flow';

/**
 * Where an ended case's page sends the browser that started an identity provider's flow (and only
 * that browser: `flow.boundHere`), within the flow's lifetime: back to the relying party with a
 * code for a closed case (a new one each visit until one is redeemed), or with `access_denied`
 * saying why for a failed or expired one. Null otherwise (an open case, a verdict already handed
 * over): the page shows as usual. A redirect, so it works without JavaScript.
 */
export async function relyingPartyReturn(
  db: Db,
  record: CaseRecord,
  flow: ProviderFlow,
  issuer: string,
  now: Date,
): Promise<string | null> {
  const status = effectiveStatus(record, now);
  // A redacted case's flow forgot where to answer.
  if (status === 'open' || record.redactedAt || !flow.boundHere) return null;
  const request = pushedRequest(flow.row);
  if (status === 'closed') {
    const code = await issueCode(db, flow.row, await teamHmacKey(db, flow.row.teamId), now);
    return code ? relyingPartyRedirect(request, issuer, { code }) : null;
  }
  const why =
    status === 'failed'
      ? `The verification failed (${record.failureReason ?? 'a step failed'}).`
      : record.canceledAt
        ? 'The verification was canceled.'
        : 'The verification was not finished in time.';
  return relyingPartyRedirect(request, issuer, { error: 'access_denied', error_description: why });
}

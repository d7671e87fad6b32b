import type { Db } from '@/db/client';
import { type CaseRecord, effectiveStatus } from '@/server/cases/case-record';
import {
  FLOW_RETURN_SECONDS,
  flowOfCase,
  issueCode,
  pushedRequest,
  relyingPartyRedirect,
} from '@/server/oidc/flows';
import { teamHmacKey } from '@/server/teams/team-secrets';

/**
 * Where an ended case's page sends the browser when an identity provider's flow opened the case,
 * within the flow's lifetime: back to the relying party with a code for a closed case (a new one
 * each visit until one is redeemed), or with `access_denied` saying why for a failed or expired
 * one. Null otherwise (an open case, no flow, a flow past its lifetime, a verdict already
 * handed over): the page shows as usual. A redirect, so it works without JavaScript.
 */
export async function relyingPartyReturn(
  db: Db,
  record: CaseRecord,
  issuer: string,
  now: Date,
): Promise<string | null> {
  const status = effectiveStatus(record, now);
  // A redacted case's flow forgot where to answer.
  if (status === 'open' || record.redactedAt) return null;
  const flow = await flowOfCase(db, record.id);
  if (!flow?.authorizedAt || now.getTime() - flow.authorizedAt.getTime() > FLOW_RETURN_SECONDS * 1000)
    return null;
  const request = pushedRequest(flow);
  if (status === 'closed') {
    const code = await issueCode(db, flow, await teamHmacKey(db, flow.teamId), now);
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

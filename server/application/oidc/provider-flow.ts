import type { Queryable } from '@/db/client';
import { FLOW_RETURN_SECONDS, type FlowRow, flowOfCase, holdsBinding } from '@/server/oidc/flows';
import { findClient } from '@/server/oidc/oidc-clients';

/**
 * An identity provider's flow as the case's pages see it, while it lasts: which application
 * asked for the verification and when, and whether this browser is the one that brought the
 * request (it holds the flow's binding). Only that browser may take the case's steps and carry
 * the verdict back: anyone else holding the case's link is told to start again from the sign-in.
 */
export interface ProviderFlow {
  row: FlowRow;
  /** The client's name, as the team registered it (Okta, say). */
  application: string;
  startedAt: Date;
  /** Whether the browser asking holds the flow's binding (its cookie on the case's path). */
  boundHere: boolean;
}

/** The flow that opened the case, if an identity provider's did and it still lasts; null otherwise. */
export async function providerFlowOf(
  db: Queryable,
  caseId: string,
  browserBinding: string | null,
  now: Date,
): Promise<ProviderFlow | null> {
  const row = await flowOfCase(db, caseId);
  if (!row?.authorizedAt || now.getTime() - row.authorizedAt.getTime() > FLOW_RETURN_SECONDS * 1000) {
    return null;
  }
  const client = await findClient(db, row.clientId);
  return {
    row,
    application: client?.name ?? row.clientId,
    startedAt: row.authorizedAt,
    boundHere: holdsBinding(row, browserBinding),
  };
}

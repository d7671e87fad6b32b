import type { Queryable } from '@/db/client';
import { type ProviderFlow, providerFlowOf } from '@/server/application/oidc/provider-flow';
import { relyingPartyReturn } from '@/server/application/oidc/return-to-relying-party';
import { type CaseStatus, effectiveStatus } from '@/server/cases/case-record';
import { findCaseByPublicId, type VerificationCase } from '@/server/cases/case-repository';
import type { Env } from '@/server/platform/env';
import { subjectStandIns, type Vendor } from '@/server/platform/stand-ins';
import { MODULES } from '@/server/verification/methods/modules';
import type { ClosedPageOffer } from '@/server/verification/methods/page-section';
import { vendorsOf } from '@/server/verification/methods/registry';
import { identityFlowOf, type SubjectStepDeps } from './subject-deps';

/**
 * The case behind a verification link, or null for an unknown or malformed public id (both look
 * the same). Every step's handler reads it first: its form token is keyed on the case.
 */
export function findSubjectCase(db: Queryable, publicId: string): Promise<VerificationCase | null> {
  return findCaseByPublicId(db, publicId);
}

/** Fingerprint of everything the page's live script watches; it refreshes the page's parts when it changes. */
export function caseVersion(found: VerificationCase, now: Date): string {
  const { record } = found;
  return [effectiveStatus(record, now), ...record.steps.map((s) => `${s.method}=${s.state}`)].join(',');
}

export interface CasePageView {
  found: VerificationCase;
  now: Date;
  identityFlow: 'upload' | 'redirect';
  /** The vendors of the case's steps a development stand-in serves (none in production). */
  standIns: Vendor[];
  /** The identity provider's flow that opened the case, while it lasts. */
  providerFlow: ProviderFlow | null;
  /** Where to send the browser instead, when an identity provider's flow waits for the verdict. */
  returnTo: string | null;
  /** What the closed case's page offers for later, each method's (a passkey for next time). */
  closedPageOffers: ClosedPageOffer[];
}

/**
 * The subject opens their verification page: the case as of now, and how its steps are served.
 * `browserBinding` is what the browser holds of an identity provider's flow (its cookie).
 */
export async function openCasePage(
  deps: SubjectStepDeps & { config: Env },
  publicId: string,
  browserBinding: string | null,
): Promise<CasePageView | null> {
  const found = await findSubjectCase(deps.db, publicId);
  if (!found) return null;
  const { record } = found;
  const now = deps.clock();
  const providerFlow = await providerFlowOf(deps.db, record.id, browserBinding, now);
  return {
    found,
    now,
    providerFlow,
    returnTo: providerFlow
      ? await relyingPartyReturn(deps.db, record, providerFlow, deps.config.BASE_URL, now)
      : null,
    identityFlow: identityFlowOf(deps, record.livemode),
    closedPageOffers: (
      await Promise.all(MODULES.map((module) => module.closedPageOffer?.(deps.db, record) ?? null))
    ).filter((offer) => offer !== null),
    // A test-mode case says so in its own banner, which covers the stand-ins it always uses.
    standIns: record.livemode
      ? subjectStandIns(deps.config, vendorsOf(record.steps.map((step) => step.method)))
      : [],
  };
}

export interface CaseProgress {
  status: CaseStatus;
  version: string;
  steps: Record<string, string>;
}

/** What the page's live script polls: the case's status and each step's state, nothing more. */
export async function readCaseProgress(
  deps: SubjectStepDeps,
  publicId: string,
): Promise<CaseProgress | null> {
  const found = await findSubjectCase(deps.db, publicId);
  if (!found) return null;
  const now = deps.clock();
  return {
    status: effectiveStatus(found.record, now),
    version: caseVersion(found, now),
    steps: Object.fromEntries(found.record.steps.map((s) => [s.method, s.state])),
  };
}

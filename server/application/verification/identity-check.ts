import { findCaseById, type VerificationCase } from '@/server/cases/case-repository';
import { errorFields, logger } from '@/server/platform/logger';
import type { IdentityResult, UploadedImage } from '@/server/platform/providers/identity/identity-provider';
import {
  startIdentitySession,
  submitIdentityUploads,
  syncIdentitySession,
} from '@/server/verification/methods/government-id/step';
import { providersFor, type SubjectStepDeps } from './subject-deps';

/** Why an ID check step did nothing: the flow is not this provider's, or the vendor failed. */
type NotDone = { outcome: 'not_offered' } | { outcome: 'vendor_failed' };

/**
 * Upload flow (the simulated provider): the subject's two pictures are checked in memory and
 * dropped; nothing is written to disk or the database but the result.
 */
export async function checkIdentityPictures(
  deps: SubjectStepDeps,
  found: VerificationCase,
  pictures: { document: UploadedImage; selfie: UploadedImage },
): Promise<IdentityResult | { outcome: 'unavailable' } | NotDone> {
  const provider = providersFor(deps, found.record.livemode).identity;
  if (provider.kind !== 'upload') return { outcome: 'not_offered' };
  try {
    return await submitIdentityUploads(deps.db, deps.jobs, {
      record: found.record,
      ...pictures,
      provider,
      now: deps.clock(),
    });
  } catch (error) {
    logger.error('identity check failed', { case_id: found.record.id, ...errorFields(error) });
    return { outcome: 'vendor_failed' };
  }
}

/**
 * Redirect flow (Stripe Identity), outbound: opens or resumes the vendor's session; the answer is
 * where to send the subject (null: the step takes nothing now). `pageBase` is where the subject's
 * pages are served, which the vendor sends them back to.
 */
export async function startIdentityCheck(
  deps: SubjectStepDeps & { pageBase: string },
  found: VerificationCase,
): Promise<{ outcome: 'started'; url: string | null } | NotDone> {
  const { record } = found;
  const provider = providersFor(deps, record.livemode).identity;
  if (provider.kind !== 'redirect') return { outcome: 'not_offered' };
  try {
    const url = await startIdentitySession(deps.db, deps.jobs, {
      record,
      provider,
      returnUrl: `${deps.pageBase}/v/${record.publicId}/identity/return`,
      now: deps.clock(),
    });
    return { outcome: 'started', url };
  } catch (error) {
    logger.error('identity session could not start', { case_id: record.id, ...errorFields(error) });
    return { outcome: 'vendor_failed' };
  }
}

/**
 * Redirect flow, the subject's return. The result is fetched from the vendor for the session
 * stored on the case (nothing in the request is trusted); null: no session is waiting. If the
 * result is not ready yet, the vendor's webhook settles it and the page's live updates show it.
 */
export async function returnFromIdentityCheck(
  deps: SubjectStepDeps,
  found: VerificationCase,
): Promise<IdentityResult | null | NotDone> {
  const provider = providersFor(deps, found.record.livemode).identity;
  if (provider.kind !== 'redirect') return { outcome: 'not_offered' };
  try {
    return await syncIdentitySession(deps.db, deps.jobs, {
      record: found.record,
      provider,
      now: deps.clock(),
    });
  } catch (error) {
    logger.error('identity result could not be fetched', { case_id: found.record.id, ...errorFields(error) });
    return { outcome: 'vendor_failed' };
  }
}

/**
 * The ID vendor's webhook about a session: its signature is checked by the vendor's adapter, and
 * the result is then fetched for the session the case stored, so a replayed or stale event cannot
 * set an outcome of its own. Only live cases reach the vendor (test mode uses the simulated one).
 * `failed`: applying it failed on our side, and the vendor should send it again.
 */
export async function settleIdentityWebhook(
  deps: SubjectStepDeps,
  webhook: { rawBody: string; signature: string },
): Promise<'not_offered' | 'invalid_signature' | 'ignored' | 'settled' | 'failed'> {
  const provider = providersFor(deps, true).identity;
  if (provider.kind !== 'redirect') return 'not_offered';
  let parsed: { sessionId: string; caseId: string } | null;
  try {
    parsed = provider.parseWebhook(webhook.rawBody, webhook.signature);
  } catch {
    return 'invalid_signature';
  }
  if (!parsed) return 'ignored';
  const record = await findCaseById(deps.db, parsed.caseId);
  if (!record) return 'ignored';
  try {
    await syncIdentitySession(deps.db, deps.jobs, { record, provider, now: deps.clock() });
  } catch (error) {
    logger.error('stripe webhook could not be applied', { case_id: record.id, ...errorFields(error) });
    return 'failed';
  }
  return 'settled';
}

import { systemClock } from '@/server/lib/clock';
import { logger } from '@/server/lib/logger';
import { MAX_IMAGE_BYTES, submitIdentityUploads } from '@/server/verification/identity-step';
import { withNotice } from '../../_ui/notices';
import { seeOther } from '../../_ui/respond';
import { caseRoute, database, identityProvider, readProtectedForm } from '../../_ui/route-kit';

export const dynamic = 'force-dynamic';

/**
 * Upload flow (simulated provider): the two pictures are read into memory, checked and dropped;
 * nothing is written to disk or the database.
 */
export const POST = caseRoute(async ({ request, found, back }) => {
  const provider = identityProvider();
  if (provider.kind !== 'upload') return seeOther(back);
  if (Number(request.headers.get('content-length') ?? 0) > 2 * MAX_IMAGE_BYTES + 64 * 1024) {
    return seeOther(withNotice(back, 'identity-too-large'));
  }
  const form = await readProtectedForm(request, found, back);
  if (form instanceof Response) return form;
  const document = form.get('document');
  const selfie = form.get('selfie');
  if (!(document instanceof File) || !(selfie instanceof File) || document.size === 0 || selfie.size === 0) {
    return seeOther(withNotice(back, 'identity-missing'));
  }
  if (document.size > MAX_IMAGE_BYTES || selfie.size > MAX_IMAGE_BYTES) {
    return seeOther(withNotice(back, 'identity-too-large'));
  }
  try {
    const result = await submitIdentityUploads(await database(), {
      record: found.record,
      document: { fileName: document.name, bytes: new Uint8Array(await document.arrayBuffer()) },
      selfie: { fileName: selfie.name, bytes: new Uint8Array(await selfie.arrayBuffer()) },
      provider,
      now: systemClock(),
    });
    if (result.outcome === 'verified') return seeOther(withNotice(back, 'identity-verified'));
    if (result.outcome === 'rejected') return seeOther(withNotice(back, 'identity-rejected'));
    return seeOther(back);
  } catch (error) {
    logger.error('identity check failed', { case_id: found.record.id, error: String(error) });
    return seeOther(withNotice(back, 'identity-unavailable'));
  }
});

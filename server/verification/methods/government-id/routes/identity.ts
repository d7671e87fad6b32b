import {
  IDENTITY_UPLOAD_RETRY_AFTER_SECONDS,
  takeIdentityUploadSlot,
} from '@/server/api/http/identity-upload-slots';
import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { withNotice } from '@/server/api/page-kit/notices';
import { answerCaseStep, pageFrame, readProtectedUpload } from '@/server/api/page-kit/page-request';
import { seeOther, uploadsBusyPage } from '@/server/api/page-kit/respond';
import {
  checkIdentityPictures,
  returnFromIdentityCheck,
  startIdentityCheck,
} from '@/server/application/verification/identity-check';
import { identityFlowOf } from '@/server/application/verification/subject-deps';
import { MAX_IMAGE_BYTES } from '@/server/verification/methods/government-id/step';

/**
 * POST /v/<id>/identity, the upload flow (simulated provider): the two pictures are read into
 * memory, checked and dropped.
 */
export function postIdentityUpload(request: Request, params: { publicId: string }): Promise<Response> {
  return answerCaseStep(request, params.publicId, async (req) => {
    const { ctx, found, back } = req;
    if (identityFlowOf(ctx, found.record.livemode) !== 'upload') return seeOther(back);
    const tooLarge = seeOther(withNotice(back, 'identity-too-large'));
    if (Number(request.headers.get('content-length') ?? 0) > 2 * MAX_IMAGE_BYTES + 64 * 1024) return tooLarge;
    // The pictures are held from the first byte read until the check is done.
    const release = takeIdentityUploadSlot();
    if (!release) {
      return uploadsBusyPage(
        pageFrame(ctx, 'subject', found, back),
        back,
        IDENTITY_UPLOAD_RETRY_AFTER_SECONDS,
      );
    }
    try {
      const files = await readProtectedUpload(request, req, { maxFileBytes: MAX_IMAGE_BYTES, tooLarge });
      if (files instanceof Response) return files;
      const { document, selfie } = files;
      if (!document?.bytes.length || !selfie?.bytes.length) {
        return seeOther(withNotice(back, 'identity-missing'));
      }
      const result = await checkIdentityPictures(ctx, found, { document, selfie });
      if (result.outcome === 'verified') return seeOther(withNotice(back, 'identity-verified'));
      if (result.outcome === 'rejected') return seeOther(withNotice(back, 'identity-rejected'));
      if (result.outcome === 'vendor_failed') return seeOther(withNotice(back, 'identity-unavailable'));
      return seeOther(back);
    } finally {
      release();
    }
  });
}

/**
 * GET /v/<id>/identity/start, the redirect flow (Stripe Identity): sends the subject to the
 * vendor's session. A plain link, not a form: it changes nothing on our side but the stored
 * session id.
 */
export function startIdentity(request: Request, params: { publicId: string }): Promise<Response> {
  return answerCaseStep(request, params.publicId, async ({ ctx, found, back }) => {
    const started = await startIdentityCheck(ctx, found);
    if (started.outcome === 'vendor_failed') return seeOther(withNotice(back, 'identity-unavailable'));
    return seeOther((started.outcome === 'started' && started.url) || back);
  });
}

/** GET /v/<id>/identity/return: where the vendor sends the subject back. */
export function returnFromIdentity(request: Request, params: { publicId: string }): Promise<Response> {
  return answerCaseStep(request, params.publicId, async ({ ctx, found, back }) => {
    const result = await returnFromIdentityCheck(ctx, found);
    if (result === null) return seeOther(back);
    switch (result.outcome) {
      case 'verified':
        return seeOther(withNotice(back, 'identity-verified'));
      case 'rejected':
        return seeOther(withNotice(back, 'identity-rejected'));
      case 'not_offered':
        return seeOther(back);
      default:
        // Not ready yet, or the vendor could not be asked: its webhook settles it.
        return seeOther(withNotice(back, 'identity-pending'));
    }
  });
}

/**
 * The ID check, under `/v/<public id>/identity`: the upload form (simulated provider: the two
 * pictures are read into memory, checked and dropped, nothing written to disk or the database);
 * `start` opens or resumes the vendor's session (Stripe Identity) and sends the subject there;
 * `return` is where the vendor sends them back (the result is fetched from the vendor, never
 * taken from the request).
 */
export const governmentIdRoutes: MethodRoutes = {
  segment: 'identity',
  paths: {
    '': { POST: (request, { publicId }) => postIdentityUpload(request, { publicId }) },
    start: { GET: (request, { publicId }) => startIdentity(request, { publicId }) },
    return: { GET: (request, { publicId }) => returnFromIdentity(request, { publicId }) },
  },
};

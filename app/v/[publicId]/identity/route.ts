import { withNotice } from '@/app/v/_ui/notices';
import { seeOther, uploadsBusyPage } from '@/app/v/_ui/respond';
import {
  caseRoute,
  clockNow,
  database,
  jobProducer,
  providers,
  readProtectedUpload,
} from '@/app/v/_ui/route-kit';
import {
  IDENTITY_UPLOAD_RETRY_AFTER_SECONDS,
  takeIdentityUploadSlot,
} from '@/server/api/http/identity-upload-slots';
import type { VerificationCase } from '@/server/cases/case-repository';
import { errorFields, logger } from '@/server/platform/logger';
import type {
  UploadedImage,
  UploadIdentityProvider,
} from '@/server/platform/providers/identity/identity-provider';
import { MAX_IMAGE_BYTES, submitIdentityUploads } from '@/server/verification/methods/government-id/step';

export const dynamic = 'force-dynamic';

/**
 * Upload flow (simulated provider): the two pictures are read into memory, checked and dropped;
 * nothing is written to disk or the database.
 */
export const POST = caseRoute(async ({ request, found, back }) => {
  const provider = (await providers(found.record.livemode)).identity;
  if (provider.kind !== 'upload') return seeOther(back);
  const tooLarge = seeOther(withNotice(back, 'identity-too-large'));
  if (Number(request.headers.get('content-length') ?? 0) > 2 * MAX_IMAGE_BYTES + 64 * 1024) return tooLarge;
  // The pictures are held from the first byte read until the check is done.
  const release = takeIdentityUploadSlot();
  if (!release) return uploadsBusyPage(back, IDENTITY_UPLOAD_RETRY_AFTER_SECONDS);
  try {
    const files = await readProtectedUpload(request, found, back, {
      maxFileBytes: MAX_IMAGE_BYTES,
      tooLarge,
    });
    if (files instanceof Response) return files;
    const { document, selfie } = files;
    if (!document?.bytes.length || !selfie?.bytes.length)
      return seeOther(withNotice(back, 'identity-missing'));
    return await checkPictures({ found, back, provider, document, selfie });
  } finally {
    release();
  }
});

async function checkPictures(input: {
  found: VerificationCase;
  back: string;
  provider: UploadIdentityProvider;
  document: UploadedImage;
  selfie: UploadedImage;
}): Promise<Response> {
  const { found, back } = input;
  try {
    const result = await submitIdentityUploads(await database(), await jobProducer(), {
      record: found.record,
      document: input.document,
      selfie: input.selfie,
      provider: input.provider,
      now: await clockNow(),
    });
    if (result.outcome === 'verified') return seeOther(withNotice(back, 'identity-verified'));
    if (result.outcome === 'rejected') return seeOther(withNotice(back, 'identity-rejected'));
    return seeOther(back);
  } catch (error) {
    logger.error('identity check failed', { case_id: found.record.id, ...errorFields(error) });
    return seeOther(withNotice(back, 'identity-unavailable'));
  }
}

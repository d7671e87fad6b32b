import { env } from '@/server/platform/env';

/** What a refused upload is told: an upload holds its slot for at most its 10 s to arrive and its check. */
export const IDENTITY_UPLOAD_RETRY_AFTER_SECONDS = 10;

/** Identity uploads this process is reading or checking now. */
let inProgress = 0;

/**
 * Takes one of the process's MAX_IDENTITY_UPLOADS slots for an identity upload, or answers null
 * when all are taken. An upload holds up to 25 MB (two pictures of up to 10 MB, and the form)
 * while it arrives and is checked, so uploads at once are what bound that memory. Call the
 * returned function once, when the upload is done with.
 */
export function takeIdentityUploadSlot(): (() => void) | null {
  if (inProgress >= env().MAX_IDENTITY_UPLOADS) return null;
  inProgress += 1;
  return () => {
    inProgress -= 1;
  };
}

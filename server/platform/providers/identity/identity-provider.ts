import type { VendorCopyKeeper } from '@/server/platform/providers/vendor-copy';

/**
 * What an ID check concluded. `name` is the name printed on the document, when the provider read
 * it; a rejection names the part that failed, the document or the face (the selfie). `reportId` is
 * the provider's id for the report behind the verdict (Stripe's VerificationReport, the simulated
 * check's id): the evidence record cites it.
 */
export type IdentityResult =
  | {
      outcome: 'verified';
      name: string | null;
      /** The given and family names as the document shows them, when the provider read both. */
      names: { given: string; family: string } | null;
      reportId: string | null;
    }
  | { outcome: 'rejected'; part: 'document' | 'face'; detail: string; reportId: string | null }
  | { outcome: 'pending' };

export interface UploadedImage {
  fileName: string;
  bytes: Uint8Array;
}

/** The subject uploads both pictures to us and the provider answers at once. */
export interface UploadIdentityProvider {
  kind: 'upload';
  /**
   * `expectedName` is the name the case expects (its subject_name, or an identity provider's
   * names): a real provider reads the document and ignores it; the simulation's document shows it
   * unless the upload names another, so a test case with a name passes its check as given.
   */
  check(input: {
    document: UploadedImage;
    selfie: UploadedImage;
    expectedName?: string | null;
  }): Promise<IdentityResult>;
}

/** The subject is sent to the provider's own pages and comes back; the result arrives later. */
export interface RedirectIdentityProvider {
  kind: 'redirect';
  /** Opens (or reopens) the provider's session for a case and says where to send the subject. */
  startSession(input: {
    caseId: string;
    publicId: string;
    returnUrl: string;
    existingSessionId: string | null;
  }): Promise<{ sessionId: string; url: string }>;
  fetchResult(sessionId: string): Promise<IdentityResult>;
  /** Verifies a provider webhook; null when it is not about an identity session. Throws on a bad signature. */
  parseWebhook(rawBody: string, signature: string): { sessionId: string; caseId: string } | null;
  /** The provider keeps each session (the pictures, the name read): a redaction erases it through this. */
  copies: VendorCopyKeeper;
}

export type IdentityProvider = UploadIdentityProvider | RedirectIdentityProvider;

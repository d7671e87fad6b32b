import type { VendorCopyKind } from '@/db/schema';

/** A copy of a case's personal data that a vendor keeps, by the vendor's id for it. */
export interface VendorCopy {
  kind: VendorCopyKind;
  vendorId: string;
}

/**
 * What a vendor did with an erasure: done; nothing there (erased before, or never kept); or
 * accepted and still going on at the vendor's side (ask again later).
 */
export type VendorErasure = 'erased' | 'absent' | 'in_progress';

/** The part of an adapter whose vendor keeps copies: it erases them through the vendor's API. */
export interface VendorCopyKeeper {
  kind: VendorCopyKind;
  /** Throws VendorError while the vendor cannot be reached or refuses for now. */
  erase(vendorId: string): Promise<VendorErasure>;
}

/**
 * A vendor's refusal or absence, worded from statuses and error codes only: its message ends up
 * in job output and logs, where a vendor's own wording (which may quote a phone number) must not.
 */
export class VendorError extends Error {
  override name = 'VendorError';
}

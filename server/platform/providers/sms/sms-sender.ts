import type { VendorCopy, VendorCopyKeeper } from '@/server/platform/providers/vendor-copy';

/**
 * Sends one text message about a case. Adapters throw when the message could not be handed over.
 */
export interface SmsSender {
  /** Hands the message over; the vendor's copy of it (number and text) when the vendor keeps one. */
  send(message: { to: string; body: string; caseId: string }): Promise<VendorCopy | null>;
  /** Set when the vendor keeps what is sent: a redaction erases it through this. */
  copies?: VendorCopyKeeper;
}

import type { VerificationMethod } from '@/db/schema/values';
import type { Vendor } from '@/server/platform/stand-ins';

/**
 * Everything about one verification method that the rest of the service reads without running it:
 * how it is named, how it fails, what it takes from the subject, what it mails, what redaction
 * erases. Each method declares it in its own folder (`<method>/definition.ts`); `registry.ts`
 * lists them, and creation, simulation, redaction, resend, the pages and the console iterate that
 * list instead of naming methods. Plain data, so the console's browser code may read it too.
 *
 * A method's key is also its price key: one unit of it is charged per case (plans and top-up
 * prices are kept per method in the database).
 */
export interface MethodDefinition {
  key: VerificationMethod;
  /** Its name in the console's lists and on a case. */
  label: string;
  /**
   * Its choice in the console's New case form, or null when it is not chosen on its own (the
   * selfie comes with the government ID).
   */
  choice: string | null;
  /**
   * The case's `failure_reason` when this step fails it; null for a step that cannot fail. The
   * subject's page says what it means by the catalogue's `case.failed.<reason>`.
   */
  failureReason: string | null;
  /**
   * Further `failure_reason`s the step can give (the government ID's `name_mismatch`: the names an
   * identity provider sent do not match the document's). Each has its `case.failed.<reason>` too.
   */
  otherFailureReasons: readonly string[];
  /** Wrong guesses the step tolerates (the one that reaches it fails the case); null if none. */
  attemptLimit: number | null;
  /** Methods that requesting this one adds (the government ID adds the selfie). */
  adds: readonly VerificationMethod[];
  /** Methods one completion of this step verifies with it (the ID check passes ID and selfie). */
  passesWith: readonly VerificationMethod[];
  /** Who its link is mailed to when the case opens (and again on resend); null if it mails none. */
  mailsLinkTo: 'subject' | 'manager' | null;
  /** The outside service it relies on (mail, text messages, the ID check), or null for none. */
  vendor: Vendor | null;
  /** Whether the subject hands over pictures (the page then says who keeps them, how long). */
  takesPictures: boolean;
  /**
   * Its step's settings that hold a personal value: erased on redaction, and every quotation of
   * them in events, deliveries and audit entries replaced.
   */
  personalSettings: readonly string[];
}

/**
 * What stands where redaction erased a personal value: the subject's address becomes an address of
 * a reserved domain (clients may parse it), anything else `[redacted]`. One place, so that what
 * checks a record after redaction (the audit chain's verification) knows them.
 */
export const ERASED = '[redacted]';

export function redactedEmail(publicId: string): string {
  return `redacted+${publicId}@redacted.invalid`;
}

/** Whether `value` is what redaction leaves in a personal value's place. */
export function isRedactionPlaceholder(value: string): boolean {
  return value === ERASED || /^redacted\+[\w-]+@redacted\.invalid$/.test(value);
}

/** Why a case expired: its time ran out, or its team canceled it. */
export const EXPIRY_REASONS = ['timeout', 'canceled'] as const;
export type ExpiryReason = (typeof EXPIRY_REASONS)[number];

/**
 * `data` of every `case.*` event: the case's ids, subject, status and creation, and for a failed
 * case why it failed.
 */
export function caseEventData(c: {
  id: string;
  publicId: string;
  subjectEmail: string;
  status: string;
  createdAt: Date;
  failureReason?: string | null;
}): Record<string, unknown> {
  return {
    case_id: c.id,
    public_id: c.publicId,
    subject_email: c.subjectEmail,
    status: c.status,
    created_at: c.createdAt.toISOString(),
    ...(c.status === 'failed' ? { failure_reason: c.failureReason ?? null } : {}),
  };
}

/** `data` of `case.expired`: the case's, and why it ended. */
export function caseExpiredData(
  c: Parameters<typeof caseEventData>[0],
  reason: ExpiryReason,
): Record<string, unknown> {
  return { ...caseEventData(c), reason };
}

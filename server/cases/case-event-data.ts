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

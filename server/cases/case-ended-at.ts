import type { CaseRecord } from './case-record';
import { effectiveStatus } from './case-record';

/** The event that ends a case, as the case's timeline holds it. */
interface TimelineEvent {
  type: string;
  createdAt: Date;
}

/**
 * When an ended case ended, for the console's case page (a case stores no such column): a
 * canceled case when it was canceled; one that ran out of time at its deadline (an expiry run
 * early, by `simulate`, moves the deadline to that instant); a closed one when its last step was
 * verified (the same transaction closes it, and redaction leaves that time alone); a failed one
 * when its step failed (or, for a step failed before steps kept that time, when its `case.failed`
 * event was recorded, or, while nothing has changed it since (redaction would), its last update). Null while the case is open, and for a failed, redacted case whose
 * event has passed EVENT_RETENTION_DAYS: nothing kept says when.
 */
export function caseEndedAt(record: CaseRecord, now: Date, timeline: TimelineEvent[]): Date | null {
  switch (effectiveStatus(record, now)) {
    case 'open':
      return null;
    case 'expired':
      return record.canceledAt ?? record.expiresAt;
    case 'closed': {
      const verified = record.steps.flatMap((step) => (step.verifiedAt ? [step.verifiedAt.getTime()] : []));
      return verified.length > 0 ? new Date(Math.max(...verified)) : null;
    }
    case 'failed': {
      const step = record.steps.find((s) => s.failedAt);
      if (step?.failedAt) return step.failedAt;
      const failed = timeline.find((event) => event.type === 'case.failed');
      return failed?.createdAt ?? (record.redactedAt ? null : record.updatedAt);
    }
  }
}

import type { AuditEntry } from '@/server/audit/record-audit';

/**
 * How a change to a case reads in the audit log, whoever made it (a console user or an API key):
 * the case's id and mode, never the person (the entry outlives a redaction).
 */
export function caseAudit(action: 'case.created' | 'case.canceled' | 'case.links_resent' | 'case.redacted') {
  return (record: { id: string; livemode: boolean }): AuditEntry => ({
    action,
    target: record.id,
    details: { livemode: record.livemode },
  });
}

import type { AuditEntry } from '@/server/audit/record-audit';

/**
 * How each change to a team's webhooks reads in its audit log, whoever made it (a console user or
 * an API key): the console's and the REST API's procedures word their entries here.
 */
export const webhookAudit = {
  endpointCreated: (row: { id: string; url: string; events: string[] }): AuditEntry => ({
    action: 'webhook_endpoint.created',
    target: row.id,
    details: { url: row.url, events: row.events },
  }),
  endpointUpdated: (row: { id: string }, changes: Record<string, unknown>): AuditEntry => ({
    action:
      changes.is_active === true
        ? 'webhook_endpoint.enabled'
        : changes.is_active === false
          ? 'webhook_endpoint.disabled'
          : 'webhook_endpoint.updated',
    target: row.id,
    details: changes,
  }),
  endpointDeleted: (row: { id: string; url: string }): AuditEntry => ({
    action: 'webhook_endpoint.deleted',
    target: row.id,
    details: { url: row.url },
  }),
  secretRotated: (row: { id: string }): AuditEntry => ({
    action: 'webhook_endpoint.secret_rotated',
    target: row.id,
  }),
  testSent: (endpointId: string, delivery: { id: string }): AuditEntry => ({
    action: 'webhook_endpoint.test_sent',
    target: endpointId,
    details: { delivery_id: delivery.id },
  }),
  recovered: (endpointId: string, since: string, queued: number): AuditEntry => ({
    action: 'webhook_endpoint.recovered',
    target: endpointId,
    details: { since, queued },
  }),
  deliveryRetried: (row: { id: string }): AuditEntry => ({
    action: 'webhook_delivery.retried',
    target: row.id,
  }),
};

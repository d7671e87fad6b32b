import { eq } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { webhookEndpoints } from '@/db/schema';
import { listTeamAdminEmails } from '@/server/auth/team-members';
import { enqueueMail } from '@/server/platform/outbox/enqueue-mail';

/** An endpoint is disabled after this many consecutive failed deliveries (dead-lettered ones). */
export const DISABLE_AFTER_FAILURES = 15;

/**
 * A delivery of this endpoint ended in `dead_letter` (a success resets the count, in
 * the delivery state's success statement, recordSuccessfulAttempts). The endpoint row is locked, so the update
 * that reaches 15 is exactly one, and only that one disables the endpoint and mails the admins.
 */
export async function recordEndpointDeadLetter(tx: Tx, endpointId: string, now: Date): Promise<void> {
  const [endpoint] = await tx
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, endpointId))
    .for('update');
  if (!endpoint) return;
  const failures = endpoint.consecutiveFailures + 1;
  const disable = failures >= DISABLE_AFTER_FAILURES && endpoint.isActive;
  await tx
    .update(webhookEndpoints)
    .set({
      consecutiveFailures: failures,
      ...(disable ? { isActive: false, disabledAt: now, updatedAt: now } : {}),
    })
    .where(eq(webhookEndpoints.id, endpointId));
  if (disable) await notifyEndpointDisabled(tx, { ...endpoint, consecutiveFailures: failures });
}

async function notifyEndpointDisabled(
  tx: Tx,
  endpoint: { teamId: string; id: string; url: string; consecutiveFailures: number },
): Promise<void> {
  const recipients = await listTeamAdminEmails(tx, endpoint.teamId);
  if (recipients.length === 0) return;
  await enqueueMail(tx, {
    to: recipients.join(', '),
    subject: 'Vouch disabled a webhook endpoint',
    text: [
      `Your webhook endpoint ${endpoint.url} (${endpoint.id}) was disabled after ${endpoint.consecutiveFailures} deliveries in a row failed all their attempts.`,
      '',
      'New events are kept for it and will be delivered once you reactivate it: fix the endpoint, check it with a test ping',
      `(POST /v1/webhooks/endpoints/${endpoint.id}/test/), then send PATCH /v1/webhooks/endpoints/${endpoint.id}/ with {"is_active": true}.`,
    ].join('\n'),
  });
}

import type { TeamRole } from '@/db/schema';
import { canManage } from '@/server/auth/team-members';
import type { CaseWire } from './wire';

/**
 * Whoever holds a case's `verification_url`, or the `public_id` it is built from, can open the
 * subject's pages and act as the subject. The console shows them to those who may act on a case
 * anyway (owners and admins, who also see the dev mailbox); a viewer reads the case without them.
 */
export function seesSubjectLinks(role: TeamRole): boolean {
  return canManage(role);
}

/** A case as the console shows it to `role`: a viewer gets neither the link nor its public id. */
export function caseForConsoleRole(wire: CaseWire, role: TeamRole) {
  if (seesSubjectLinks(role)) return wire;
  return { ...wire, public_id: null, verification_url: null };
}

/** An event's `data` as the console shows it to `role`: `public_id` withheld from a viewer. */
export function eventDataForConsoleRole(
  data: Record<string, unknown>,
  role: TeamRole,
): Record<string, unknown> {
  if (seesSubjectLinks(role) || !('public_id' in data)) return data;
  const { public_id: _withheld, ...rest } = data;
  return rest;
}

/**
 * A webhook delivery's body (an event envelope, compact JSON as sent) as the console shows it to
 * `role`: for a viewer, the same envelope without `data.public_id`. A body that is not an
 * envelope is not shown to a viewer at all.
 */
export function deliveryPayloadForConsoleRole(payload: string, role: TeamRole): string | null {
  if (seesSubjectLinks(role)) return payload;
  try {
    const envelope = JSON.parse(payload) as { data?: unknown };
    if (envelope.data && typeof envelope.data === 'object') {
      envelope.data = eventDataForConsoleRole(envelope.data as Record<string, unknown>, role);
    }
    return JSON.stringify(envelope);
  } catch {
    return null;
  }
}

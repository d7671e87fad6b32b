import { utc } from '@date-fns/utc';
import { subDays } from 'date-fns';
import type { Db } from '@/db/client';
import { redactCasesPastRetention } from '@/server/application/cases/redact-past-retention';
import { purgeAudit } from '@/server/audit/purge-audit';
import { deleteOldImports } from '@/server/case-imports/queries';
import { purgeEvents } from '@/server/events/purge-events';
import { purgeMail } from '@/server/mail/purge-mail';
import { FLOW_REQUEST_RETENTION_DAYS, purgeFlows } from '@/server/oidc/purge-flows';
import type { Clock } from '@/server/platform/clock';
import type { Env } from '@/server/platform/env';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';
import { purgeExpiredChallenges } from '@/server/verification/methods/passkey/ceremonies';

export type RetentionPolicy = Pick<
  Env,
  'EVENT_RETENTION_DAYS' | 'MAIL_RETENTION_DAYS' | 'AUDIT_RETENTION_DAYS' | 'KEYS_SECRET'
>;

/**
 * How long a console import keeps its rows (the addresses of refused rows, the result file): a
 * draft never confirmed for a day, a finished import for 30 days.
 */
export const IMPORT_RETENTION = { draftDays: 1, finishedDays: 30 } as const;

/**
 * The daily `data-retention` job: ended cases past their team's retention period are redacted,
 * then events, mails, audit entries, console imports, identity-provider flows' requests and
 * passkey ceremonies never finished past their periods are deleted. Each part works in
 * batches that commit on their own, so the job is resumable, and safe to run on several workers at
 * once (redaction takes its cases SKIP LOCKED; a row deleted twice is deleted once).
 */
export async function applyRetention(
  deps: { db: Db; clock: Clock; jobs: JobProducer },
  policy: RetentionPolicy,
) {
  const { db, clock } = deps;
  const before = (days: number) => subDays(clock(), days, { in: utc });
  const redactedCases = await redactCasesPastRetention(deps);
  const events = await purgeEvents(db, before(policy.EVENT_RETENTION_DAYS));
  const mail = await purgeMail(db, before(policy.MAIL_RETENTION_DAYS));
  // The audit chain's new start is signed: its checkpoint.
  const auditEntries = await purgeAudit(db, before(policy.AUDIT_RETENTION_DAYS), {
    kek: () => signingKeyEncryptionKey(db, policy.KEYS_SECRET),
    now: clock(),
  });
  const caseImports = await deleteOldImports(db, {
    draftsBefore: before(IMPORT_RETENTION.draftDays),
    finishedBefore: before(IMPORT_RETENTION.finishedDays),
  });
  const oidcFlows = await purgeFlows(db, before(FLOW_REQUEST_RETENTION_DAYS));
  const passkeyChallenges = await purgeExpiredChallenges(db, clock());
  return {
    redactedCases,
    events,
    mails: mail.mails,
    devMailbox: mail.devMailbox,
    auditEntries,
    caseImports,
    oidcFlowsDeleted: oidcFlows.deleted,
    oidcFlowRequestsForgotten: oidcFlows.forgotten,
    passkeyChallenges,
  };
}

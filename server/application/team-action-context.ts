import type { Db } from '@/db/client';
import type { AuditActor } from '@/server/audit/record-audit';
import type { Clock } from '@/server/platform/clock';
import type { JobProducer } from '@/server/platform/jobs/producers';

/**
 * Who changes a team's setup, and when: a console user or an API key (the actor), acting in one
 * team. Every such change commits with its audit entry (auditedChange), so the log shows exactly
 * the changes that happened.
 */
export interface TeamActionContext {
  db: Db;
  teamId: string;
  actor: AuditActor;
  clock: Clock;
  /** Queues the jobs a change causes (webhook deliveries), in its transaction. */
  jobs: JobProducer;
}

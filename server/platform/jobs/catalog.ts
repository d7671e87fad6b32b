import type { Queue } from 'pg-boss';

/**
 * Every queue the service uses, with its retry policy. All are created at boot: pg-boss refuses
 * jobs for a queue that does not exist.
 */
export const QUEUES = {
  /** One attempt of one webhook delivery. The retry schedule is the delivery's own. */
  webhookDeliver: 'webhook-deliver',
  /** Periodic: hands deliveries whose worker died mid-attempt to a new worker. */
  webhookRecover: 'webhook-recover',
  /** Periodic: marks open cases past `expires_at` as expired and emits `case.expired`. */
  casesExpire: 'cases-expire',
  /** Periodic (each second): sends the outbox's queued mails that are due (mail_outbox). */
  mailSend: 'mail-send',
  /** Daily: deletes idempotency keys past their 30-day retention. */
  idempotencyPurge: 'idempotency-purge',
  /** Daily: redacts cases past their team's retention; deletes old events, mails and audit entries. */
  dataRetention: 'data-retention',
  /** The vendors' copies of a redacted case (Stripe's session, Twilio's messages), erased through their APIs. */
  vendorErasure: 'vendor-erasure',
  /** A console CSV import, created chunk by chunk (server/application/case-imports). */
  caseImport: 'case-import',
  /** Periodic: hands imports whose worker stopped mid-run to a new job. */
  caseImportsResume: 'case-imports-resume',
  /** Periodic: seals new audit entries into their team's hash chain (server/audit/audit-chain.ts). */
  auditSeal: 'audit-seal',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * What each queue's jobs carry: the producers (producers.ts) take it, the consumers
 * (server/workers) receive it, so a renamed field is a type error on both sides, not a delivery
 * that silently never happens.
 */
export interface JobPayloads {
  [QUEUES.webhookDeliver]: { deliveryId: string };
  [QUEUES.mailSend]: null;
  [QUEUES.webhookRecover]: null;
  [QUEUES.casesExpire]: null;
  [QUEUES.idempotencyPurge]: null;
  [QUEUES.dataRetention]: null;
  [QUEUES.vendorErasure]: { caseId: string };
  [QUEUES.caseImport]: { importId: string };
  [QUEUES.caseImportsResume]: null;
  [QUEUES.auditSeal]: null;
}

/** The periodic queues: their jobs are ticks that carry nothing. */
export const TICK_QUEUES: readonly QueueName[] = [
  QUEUES.mailSend,
  QUEUES.webhookRecover,
  QUEUES.casesExpire,
  QUEUES.idempotencyPurge,
  QUEUES.dataRetention,
  QUEUES.caseImportsResume,
  QUEUES.auditSeal,
];

export function queueOptions(name: QueueName, config: { webhookTimeoutMs: number }): Omit<Queue, 'name'> {
  switch (name) {
    case QUEUES.webhookDeliver:
      return {
        // Retries here cover crashes and database errors only; failed HTTP attempts are
        // rescheduled by the delivery itself on WEBHOOK_RETRY_SCHEDULE.
        retryLimit: 10,
        retryDelay: 5,
        expireInSeconds: Math.ceil(config.webhookTimeoutMs / 1000) + 60,
        notify: true,
      };
    case QUEUES.mailSend:
      // A tick, not a job per mail: a job per mail cost every case creation a pg-boss insert (its
      // most expensive statement) and the worker a fetch and a completion per mail. Each mail's
      // retries are kept on its own row. A tick that fails just leaves the mails for the next.
      return { policy: 'short', retryLimit: 0, expireInSeconds: 600 };
    case QUEUES.caseImport:
      // Each chunk commits on its own, so a retry (after a crash or a lost database) continues
      // where the last commit left off. A run is seconds long; one left `active` by a killed
      // worker is also picked up by the resume tick long before pg-boss expires it.
      return { retryLimit: 20, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 900 };
    case QUEUES.webhookRecover:
    case QUEUES.caseImportsResume:
    case QUEUES.auditSeal:
    case QUEUES.casesExpire:
    case QUEUES.dataRetention:
      // A day's backlog of redactions may take a while; it commits batch by batch, so a run
      // that is cut off loses nothing and the next one continues.
      return { policy: 'short', retryLimit: 0, expireInSeconds: 3600 };
    case QUEUES.vendorErasure:
      // A vendor may be unreachable for a while, and Twilio refuses to delete a message still
      // being sent, which it says can rarely last up to 14 days; Stripe's redaction itself runs
      // up to four days, checked on each retry. 5–10 s, doubling to at most 6 hours, 70 times:
      // about 15 days. Each run only calls vendors, each call with its own time-out.
      return {
        retryLimit: 70,
        retryDelay: 5,
        retryBackoff: true,
        retryDelayMax: 6 * 60 * 60,
        expireInSeconds: 600,
      };
    case QUEUES.idempotencyPurge:
      // One queued at most, so the ticks every worker queues never pile up; any number running.
      // `stately` (one queued and one running) held every tick back for minutes behind one left
      // running by a worker that died mid-run, until pg-boss expired it. Their work is safe to
      // run twice at once (row locks, SKIP LOCKED).
      return { policy: 'short', retryLimit: 0, expireInSeconds: 300 };
  }
}

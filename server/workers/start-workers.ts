import { setTimeout as sleep } from 'node:timers/promises';
import type { PgBoss } from 'pg-boss';
import { resumeStrandedImports, runCaseImport } from '@/server/application/case-imports/run-case-import';
import { sealAuditChains } from '@/server/audit/audit-chain';
import { importAnswerKey } from '@/server/case-imports/sealed-answers';
import { eraseVendorCopies } from '@/server/cases/erase-vendor-copies';
import { expireDueCases } from '@/server/cases/expire-cases';
import { purgeIdempotencyKeys } from '@/server/idempotency/purge-idempotency-keys';
import { sendDueMails } from '@/server/mail/send-mail';
import { isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { type JobPayloads, QUEUES, type QueueName } from '@/server/platform/jobs/catalog';
import { failingSafely } from '@/server/platform/jobs/job-failure';
import { reportOutage } from '@/server/platform/jobs/outage-log';
import { logger } from '@/server/platform/logger';
import type { Runtime } from '@/server/platform/runtime';
import { recoverStalledDeliveries } from '@/server/webhooks/attempt-delivery';
import { startDeliveryDispatcher } from '@/server/webhooks/delivery-dispatcher';
import { applyRetention } from './data-retention';

/** Delivery jobs one fetch takes at most. */
const DELIVERY_FETCH_BATCH = 50;
/** How long the delivery fetcher rests after a short batch (latency spent for larger batches). */
const DELIVERY_FETCH_PAUSE_MS = 20;
/** Attempts a worker process keeps under way, and how their outcomes are written together. */
const DELIVERY_DISPATCH = { maxInFlight: 200, writeBatch: DELIVERY_FETCH_BATCH, writeAfterMs: 10 };

/** How often a worker offers the next run of a long period: a run starts this soon after its slot opens. */
const LONGEST_OFFER_SECONDS = 60;

/**
 * A job that runs once every `seconds` across all the worker processes. Every worker offers the
 * run on its own timer (so nothing depends on any one process), and pg-boss keeps one job per
 * slot of `seconds` (a throttled send: a unique slot per queue, whoever sends first), so three
 * workers run it once per period, not three times. Whichever worker is free runs it. A worker
 * that dies mid-run leaves its job `active` until pg-boss expires it, but the next slot's job is
 * created all the same (a chain of self-rescheduling runs broke there). The queue's `short`
 * policy also keeps at most one waiting, so runs never pile up behind a slow one.
 */
async function every(
  boss: PgBoss,
  queue: QueueName,
  seconds: number,
  run: () => Promise<void>,
  onShutdown: (hook: () => Promise<void>) => void,
): Promise<void> {
  await boss.work(queue, { pollingIntervalSeconds: 1 }, failingSafely(queue, run));
  const offer = () => {
    boss.sendThrottled(queue, null, null, seconds).catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) return reportOutage();
      logger.error('could not queue a periodic job', { queue, error: String(error) });
    });
  };
  offer();
  const timer = setInterval(offer, Math.min(seconds, LONGEST_OFFER_SECONDS) * 1000);
  onShutdown(async () => clearInterval(timer));
}

/**
 * The consumers, started by a process entry that runs jobs (the worker process, or the
 * single-process web with RUN_WORKERS on), after the runtime booted with `workers: true`. Every
 * handler fails through `jobFailure` (`failingSafely`), so no statement's parameters reach a job's
 * row or the log.
 */
export async function startWorkers(runtime: Runtime): Promise<void> {
  const boss = runtime.jobs;
  const db = runtime.database.db;
  const { env: config, clock, onShutdown } = runtime;
  const changes = { db, clock, jobs: runtime.jobProducer };
  const deliveryDeps = {
    ...changes,
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
  };
  const deliveries = startDeliveryDispatcher(deliveryDeps, DELIVERY_DISPATCH);
  await boss.work<JobPayloads[typeof QUEUES.webhookDeliver]>(
    QUEUES.webhookDeliver,
    {
      batchSize: DELIVERY_FETCH_BATCH,
      // One fetcher is enough: it waits for the claim, never for the attempts.
      localConcurrency: 1,
      // Retries come due without a NOTIFY, so the idle poll stays short even with LISTEN/NOTIFY on.
      pollingIntervalSeconds: 1,
      notifyPollingIntervalSeconds: 1,
      burstWhenBatchFull: true,
    },
    failingSafely(QUEUES.webhookDeliver, async (jobs) => {
      // A claim that cannot be made fails the batch's jobs, and pg-boss retries them.
      await deliveries.dispatch(jobs.map((job) => job.data.deliveryId));
      // A short batch means the queue is caught up: wait a moment before the next fetch, so that
      // it takes what arrived meanwhile at once rather than one delivery per fetch (each fetch,
      // claim and completion is a statement, however few deliveries it carries).
      if (jobs.length < DELIVERY_FETCH_BATCH) await sleep(DELIVERY_FETCH_PAUSE_MS);
    }),
  );
  // Before the job queue stops (hooks run in reverse): no new fetch, then every attempt under way
  // ends and is written while the database is still open.
  onShutdown(async () => {
    await boss.offWork(QUEUES.webhookDeliver, { wait: true });
    await deliveries.drain();
  });

  const mailSender = {
    db,
    clock,
    transport: { smtpUrl: config.SMTP_URL, from: `Vouch <no-reply@${new URL(config.BASE_URL).hostname}>` },
    retryDelaySeconds: config.MAIL_RETRY_DELAY_SECONDS,
  };
  // Each second, not every JOB_TICK_SECONDS: a subject waits for the mail a case sends.
  await every(boss, QUEUES.mailSend, 1, () => sendDueMails(mailSender).then(() => undefined), onShutdown);

  await every(
    boss,
    QUEUES.webhookRecover,
    config.JOB_TICK_SECONDS,
    async () => {
      const recovered = await recoverStalledDeliveries(changes);
      if (recovered > 0)
        logger.warn('webhook attempts interrupted by a stopped worker were requeued', { recovered });
    },
    onShutdown,
  );
  // A few seconds behind the writes, off their path: writing an entry never waits for the chain.
  await every(
    boss,
    QUEUES.auditSeal,
    config.JOB_TICK_SECONDS,
    async () => {
      await sealAuditChains(db);
    },
    onShutdown,
  );
  await every(
    boss,
    QUEUES.casesExpire,
    config.JOB_TICK_SECONDS,
    async () => {
      const expired = await expireDueCases(changes);
      if (expired > 0) logger.info('cases expired', { expired });
    },
    onShutdown,
  );

  // The daily purges: pg-boss cron schedules once ran them (17 and 47 past three, UTC); a
  // database an earlier version ran on still holds those schedules, which would run them twice.
  for (const queue of [QUEUES.idempotencyPurge, QUEUES.dataRetention]) await boss.unschedule(queue);
  await every(
    boss,
    QUEUES.idempotencyPurge,
    config.RETENTION_INTERVAL_SECONDS,
    async () => {
      const purged = await purgeIdempotencyKeys(db, clock);
      if (purged > 0) logger.info('idempotency keys past retention deleted', { purged });
    },
    onShutdown,
  );

  // Only live cases reach a vendor: test mode's stand-ins keep nothing outside the database.
  const { identity, sms } = runtime.providers.live;
  const keepers = [identity.kind === 'redirect' ? identity.copies : null, sms.copies ?? null].filter(
    (keeper) => keeper !== null,
  );
  await boss.work<JobPayloads[typeof QUEUES.vendorErasure]>(
    QUEUES.vendorErasure,
    failingSafely(QUEUES.vendorErasure, async ([job]) => {
      if (!job) return;
      const { erased } = await eraseVendorCopies({ db, clock, keepers }, job.data.caseId);
      if (erased > 0)
        logger.info('vendor copies of a redacted case erased', { case_id: job.data.caseId, erased });
    }),
  );

  const importDeps = {
    ...changes,
    answerKey: () => importAnswerKey(db, config.KEYS_SECRET),
    caseTtlSeconds: config.CASE_TTL_SECONDS,
    pageBase: config.VERIFY_URL_BASE,
    defaultLocale: config.DEFAULT_LOCALE,
  };
  await boss.work<JobPayloads[typeof QUEUES.caseImport]>(
    QUEUES.caseImport,
    { localConcurrency: 2 },
    failingSafely(QUEUES.caseImport, async ([job]) => {
      if (!job) return;
      const created = await runCaseImport(importDeps, job.data.importId);
      logger.info('import run ended', { import_id: job.data.importId, created });
    }),
  );
  await every(
    boss,
    QUEUES.caseImportsResume,
    config.JOB_TICK_SECONDS,
    async () => {
      const resumed = await resumeStrandedImports(importDeps);
      if (resumed > 0) logger.warn('imports whose worker stopped were handed on', { resumed });
    },
    onShutdown,
  );

  await every(
    boss,
    QUEUES.dataRetention,
    config.RETENTION_INTERVAL_SECONDS,
    async () => {
      const done = await applyRetention(changes, config);
      if (Object.values(done).some((count) => count > 0))
        logger.info('data past retention redacted or deleted', done);
    },
    onShutdown,
  );
}

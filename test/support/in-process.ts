import type { PgBoss } from 'pg-boss';
import { createCase, prepareCase, teamCaseSources } from '@/server/application/cases/create-case';
import { type CreateCaseInput, createCaseInput } from '@/server/application/cases/wire';
import type { CaseRecord } from '@/server/cases/case-record';
import { type Clock, systemClock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { parseEnv } from '@/server/platform/env';
import { startJobQueue } from '@/server/platform/jobs/job-queue';
import { type JobProducer, jobProducer } from '@/server/platform/jobs/producers';
import { createRateLimiters, type RateLimiters } from '@/server/rate-limits/limiters';
import { hashingAnswers } from '@/server/verification/methods/custom-question/answer';
import { createTestDatabase, type TestDatabase } from './database';

/**
 * What domain and application code needs, built in the test's own process against a fresh copy
 * of the migrated template: the database, and a job producer on pg-boss in that database (no
 * consumers: a test reads the queued jobs, or runs the handler it is about). No app is started.
 */
export interface InProcess {
  database: TestDatabase;
  /** The producer every change that queues work takes (as the runtime hands it out). */
  jobs: JobProducer;
  /** The queue itself, to read what was queued. */
  queue: PgBoss;
  /** The budgets as the service spends them (default settings), in the test's database. */
  rateLimiters: RateLimiters;
  close: () => Promise<void>;
}

export async function startInProcess(): Promise<InProcess> {
  const database = await createTestDatabase();
  const shutdownHooks: Array<() => Promise<void>> = [];
  const queue = await startJobQueue(
    { databaseUrl: database.url, onShutdown: (hook) => shutdownHooks.push(hook) },
    { workers: false, webhookTimeoutMs: 10_000 },
  );
  return {
    database,
    jobs: jobProducer(queue),
    queue,
    rateLimiters: createRateLimiters(database.db, parseEnv({ NODE_ENV: 'test' })),
    close: async () => {
      for (const hook of shutdownHooks.reverse()) await hook();
      await database.close();
    },
  };
}

/**
 * Opens a case as every surface does (the body validated as the API's, then createCase in a
 * transaction of its own), cases living an hour, their links on https://vouch.test.
 */
export async function openCase(
  inProcess: InProcess,
  scope: DataScope,
  body: Partial<CreateCaseInput> & Pick<CreateCaseInput, 'subject_email' | 'verification_methods'>,
  clock: Clock = systemClock,
): Promise<CaseRecord> {
  const prepared = await prepareCase(
    createCaseInput.parse(body),
    teamCaseSources(inProcess.database.db, scope),
    hashingAnswers((task) => task()),
  );
  return inProcess.database.db.transaction((tx) =>
    createCase(tx, scope, prepared, {
      clock,
      jobs: inProcess.jobs,
      caseTtlSeconds: 3600,
      pageBase: 'https://vouch.test',
      defaultLocale: 'en',
    }),
  );
}

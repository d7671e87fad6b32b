import type { Db } from '@/db/client';
import type { Clock } from '@/server/platform/clock';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { Providers } from '@/server/platform/runtime';

/**
 * What every step a subject (or their manager) takes needs, handed in by the page handler: the
 * database, the job producer, the clock every decision takes its instant from, and the vendors' adapters of each
 * mode (a test-mode case always gets the stand-ins).
 */
export interface SubjectStepDeps {
  db: Db;
  clock: Clock;
  /** Queues the jobs a step's events cause (webhook deliveries), in its transaction. */
  jobs: JobProducer;
  providers: { live: Providers; test: Providers };
}

export function providersFor(deps: SubjectStepDeps, livemode: boolean): Providers {
  return livemode ? deps.providers.live : deps.providers.test;
}

/** How this case's ID check runs: pictures uploaded to us, or a redirect to the ID vendor. */
export function identityFlowOf(deps: SubjectStepDeps, livemode: boolean): 'upload' | 'redirect' {
  return providersFor(deps, livemode).identity.kind;
}

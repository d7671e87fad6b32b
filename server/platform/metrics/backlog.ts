import { sql } from 'drizzle-orm';
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '@/db/client';
import { QUEUES } from '@/server/platform/jobs/catalog';

/**
 * What waits in the database, read when Prometheus scrapes: the jobs ready to run and not yet
 * taken, per queue, and how long the oldest of them has waited (`vouch_jobs_queued`,
 * `vouch_jobs_oldest_seconds`), and the mails waiting to be sent (`vouch_mail_queued`). A job
 * deferred to later (a webhook attempt's retry, a periodic job's next run) is not waiting yet.
 *
 * Served by worker processes only: every process would read the same numbers, and a sum across
 * them would count each several times. While the database cannot be reached they are left out.
 */
export function watchBacklog(registry: Registry, db: Db): void {
  const registers = [registry];
  // One read serves the three: Prometheus collects each gauge in turn within one scrape.
  let reading: Promise<void> | undefined;
  const collect = () => {
    reading ??= read().finally(() => {
      // The next scrape reads afresh.
      setImmediate(() => {
        reading = undefined;
      });
    });
    return reading;
  };
  const queued = new Gauge({
    name: 'vouch_jobs_queued',
    help: 'Jobs ready to run and not yet taken, by queue.',
    labelNames: ['queue'],
    registers,
    collect,
  });
  const oldest = new Gauge({
    name: 'vouch_jobs_oldest_seconds',
    help: 'Seconds the oldest job ready to run has waited, by queue (0 when none waits).',
    labelNames: ['queue'],
    registers,
    collect,
  });
  const mail = new Gauge({
    name: 'vouch_mail_queued',
    help: 'Mails waiting to be sent (queued in the outbox).',
    registers,
    collect,
  });

  async function read(): Promise<void> {
    queued.reset();
    oldest.reset();
    mail.reset();
    try {
      const jobs = (await db.execute(sql`
        select name, count(*)::int as queued,
               coalesce(extract(epoch from now() - min(start_after)), 0)::float8 as oldest
          from pgboss.job
         where state in ('created', 'retry') and start_after <= now()
         group by name`)) as unknown as Array<{ name: string; queued: number; oldest: number }>;
      const [mails] = (await db.execute(sql`
        select count(*)::int as queued from mail_outbox where status = 'queued'`)) as unknown as Array<{
        queued: number;
      }>;
      const byName = new Map(jobs.map((row) => [row.name, row]));
      for (const name of Object.values(QUEUES)) {
        queued.set({ queue: name }, byName.get(name)?.queued ?? 0);
        oldest.set({ queue: name }, Math.max(0, byName.get(name)?.oldest ?? 0));
      }
      mail.set(mails?.queued ?? 0);
    } catch {
      // Left out of this scrape: `/readyz` says why.
    }
  }
}

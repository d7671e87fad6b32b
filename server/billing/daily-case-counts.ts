import { millisecondsInDay } from 'date-fns/constants';
import { and, eq, gte, lt, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { cases } from '@/db/schema';
import type { BillingPeriod } from './billing-period';

export interface DailyCaseCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  created: number;
  closed: number;
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * Cases created and cases closed on each UTC day of the period (up to `now`), every day listed
 * even when nothing happened, so a chart needs no gap handling. A case counts as closed on the
 * day of its last update, which for a closed case is the day it closed. Live cases only, like
 * the usage beside them: test mode is free and never counted.
 */
export async function dailyCaseCounts(
  db: Queryable,
  teamId: string,
  period: BillingPeriod,
  now: Date,
): Promise<DailyCaseCount[]> {
  const end = now < period.end ? now : period.end;
  const day = (column: typeof cases.createdAt) =>
    sql<string>`to_char(date_trunc('day', ${column}), 'YYYY-MM-DD')`;
  const [created, closed] = await Promise.all([
    db
      .select({ day: day(cases.createdAt), count: sql<number>`count(*)::int` })
      .from(cases)
      .where(
        and(
          eq(cases.teamId, teamId),
          eq(cases.livemode, true),
          gte(cases.createdAt, period.start),
          lt(cases.createdAt, period.end),
        ),
      )
      .groupBy(sql`1`),
    db
      .select({ day: day(cases.updatedAt), count: sql<number>`count(*)::int` })
      .from(cases)
      .where(
        and(
          eq(cases.teamId, teamId),
          eq(cases.livemode, true),
          eq(cases.status, 'closed'),
          gte(cases.updatedAt, period.start),
          lt(cases.updatedAt, period.end),
        ),
      )
      .groupBy(sql`1`),
  ]);
  const createdByDay = new Map(created.map((r) => [r.day, r.count]));
  const closedByDay = new Map(closed.map((r) => [r.day, r.count]));
  const days: DailyCaseCount[] = [];
  for (let t = Date.parse(`${utcDay(period.start)}T00:00:00Z`); t <= end.getTime(); t += millisecondsInDay) {
    const key = utcDay(new Date(t));
    days.push({ day: key, created: createdByDay.get(key) ?? 0, closed: closedByDay.get(key) ?? 0 });
  }
  return days;
}

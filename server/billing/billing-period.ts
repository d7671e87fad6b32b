import { utc } from '@date-fns/utc';
import { addMonths, differenceInCalendarMonths } from 'date-fns';

export interface BillingPeriod {
  start: Date;
  end: Date;
}

/**
 * The monthly period containing `now`, counted from the team's billing anchor. Each boundary is
 * computed from the anchor itself, so a 31st anchor comes back to the 31st after a short month
 * instead of drifting to the 28th. The arithmetic runs in UTC whatever the process's time zone
 * (`in: utc`): in local time a boundary would follow the server's daylight-saving shifts.
 */
export function billingPeriodAt(anchor: Date, now: Date): BillingPeriod {
  const after = (months: number) => addMonths(anchor, months, { in: utc });
  let months = differenceInCalendarMonths(now, anchor, { in: utc });
  if (after(months) > now) months -= 1;
  if (months < 0) months = 0;
  return { start: after(months), end: after(months + 1) };
}

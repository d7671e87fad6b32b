export interface BillingPeriod {
  start: Date;
  end: Date;
}

/** The anchor moved by whole months, the day clamped to the month's length (Jan 31 → Feb 28). */
function addMonths(anchor: Date, months: number): Date {
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/**
 * The monthly period containing `now`, counted from the team's billing anchor (UTC). Each
 * boundary is computed from the anchor itself, so a 31st anchor comes back to the 31st after a
 * short month instead of drifting to the 28th.
 */
export function billingPeriodAt(anchor: Date, now: Date): BillingPeriod {
  let months =
    (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  if (addMonths(anchor, months) > now) months -= 1;
  if (months < 0) months = 0;
  return { start: addMonths(anchor, months), end: addMonths(anchor, months + 1) };
}

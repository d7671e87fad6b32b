import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { billingPeriodAt } from './billing-period';

const at = (iso: string) => new Date(iso);
const period = (anchor: string, now: string) => {
  const p = billingPeriodAt(at(anchor), at(now));
  return { start: p.start.toISOString(), end: p.end.toISOString() };
};

describe('billingPeriodAt', () => {
  it('is the month starting at the anchor', () => {
    expect(period('2026-03-10T08:30:00.000Z', '2026-03-20T00:00:00.000Z')).toEqual({
      start: '2026-03-10T08:30:00.000Z',
      end: '2026-04-10T08:30:00.000Z',
    });
  });

  it('starts a new period exactly at the boundary (start inclusive, end exclusive)', () => {
    expect(period('2026-03-10T08:30:00.000Z', '2026-04-10T08:30:00.000Z').start).toBe(
      '2026-04-10T08:30:00.000Z',
    );
    expect(period('2026-03-10T08:30:00.000Z', '2026-04-10T08:29:59.999Z').start).toBe(
      '2026-03-10T08:30:00.000Z',
    );
  });

  it('clamps a 31st anchor to the end of short months and comes back to the 31st', () => {
    const anchor = '2026-01-31T10:00:00.000Z';
    expect(period(anchor, '2026-02-15T00:00:00.000Z')).toEqual({
      start: '2026-01-31T10:00:00.000Z',
      end: '2026-02-28T10:00:00.000Z',
    });
    expect(period(anchor, '2026-03-01T00:00:00.000Z')).toEqual({
      start: '2026-02-28T10:00:00.000Z',
      end: '2026-03-31T10:00:00.000Z',
    });
    expect(period(anchor, '2026-04-05T00:00:00.000Z')).toEqual({
      start: '2026-03-31T10:00:00.000Z',
      end: '2026-04-30T10:00:00.000Z',
    });
    expect(period(anchor, '2026-05-30T00:00:00.000Z')).toEqual({
      start: '2026-04-30T10:00:00.000Z',
      end: '2026-05-31T10:00:00.000Z',
    });
  });

  it('uses February 29th in leap years', () => {
    expect(period('2028-01-31T10:00:00.000Z', '2028-02-29T12:00:00.000Z')).toEqual({
      start: '2028-02-29T10:00:00.000Z',
      end: '2028-03-31T10:00:00.000Z',
    });
    expect(period('2028-01-30T00:00:00.000Z', '2028-02-10T00:00:00.000Z').end).toBe(
      '2028-02-29T00:00:00.000Z',
    );
  });

  it('crosses year ends', () => {
    expect(period('2025-12-15T00:00:00.000Z', '2026-01-20T00:00:00.000Z')).toEqual({
      start: '2026-01-15T00:00:00.000Z',
      end: '2026-02-15T00:00:00.000Z',
    });
    expect(period('2025-11-30T23:59:59.000Z', '2026-01-01T00:00:00.000Z')).toEqual({
      start: '2025-12-30T23:59:59.000Z',
      end: '2026-01-30T23:59:59.000Z',
    });
  });

  it('counts from the anchor, not from the previous period, over many years', () => {
    expect(period('2020-01-31T00:00:00.000Z', '2026-11-22T00:00:00.000Z')).toEqual({
      start: '2026-10-31T00:00:00.000Z',
      end: '2026-11-30T00:00:00.000Z',
    });
  });

  it('before the anchor, the first period is the one starting at the anchor', () => {
    expect(period('2026-06-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z')).toEqual({
      start: '2026-06-01T00:00:00.000Z',
      end: '2026-07-01T00:00:00.000Z',
    });
  });

  it('moves month ends by whole months: Jan 31 + 1 month is Feb 28, Mar 31 + 1 month is Apr 30', () => {
    expect(period('2026-01-31T00:00:00.000Z', '2026-01-31T00:00:00.000Z').end).toBe(
      '2026-02-28T00:00:00.000Z',
    );
    expect(period('2026-03-31T23:59:59.999Z', '2026-04-01T00:00:00.000Z').end).toBe(
      '2026-04-30T23:59:59.999Z',
    );
    expect(period('2026-12-31T12:00:00.000Z', '2027-01-15T00:00:00.000Z')).toEqual({
      start: '2026-12-31T12:00:00.000Z',
      end: '2027-01-31T12:00:00.000Z',
    });
  });

  it('keeps UTC boundaries whatever the process time zone is', () => {
    const zone = process.env.TZ;
    try {
      for (const tz of ['America/New_York', 'Asia/Tokyo', 'Australia/Lord_Howe']) {
        process.env.TZ = tz;
        // New York changes to daylight time on 8 March: a local-time month would end an hour early.
        expect(period('2026-03-01T12:00:00.000Z', '2026-03-20T00:00:00.000Z').end).toBe(
          '2026-04-01T12:00:00.000Z',
        );
        // 20:00 on 30 January UTC is already the 31st in Tokyo: a local-time month would end on the 27th.
        expect(period('2026-01-30T20:00:00.000Z', '2026-02-10T00:00:00.000Z').end).toBe(
          '2026-02-28T20:00:00.000Z',
        );
        expect(period('2026-01-31T23:30:00.000Z', '2026-03-01T00:00:00.000Z')).toEqual({
          start: '2026-02-28T23:30:00.000Z',
          end: '2026-03-31T23:30:00.000Z',
        });
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('always contains now, periods tile without gaps, and start keeps the anchor day when the month has it', () => {
    const instant = fc.date({
      min: new Date('2000-01-01T00:00:00Z'),
      max: new Date('2100-01-01T00:00:00Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(instant, fc.integer({ min: 0, max: 1200 * 24 * 3600 * 1000 }), (anchor, offsetMs) => {
        const now = new Date(anchor.getTime() + offsetMs);
        const { start, end } = billingPeriodAt(anchor, now);
        expect(start.getTime()).toBeLessThanOrEqual(now.getTime());
        expect(end.getTime()).toBeGreaterThan(now.getTime());
        expect(billingPeriodAt(anchor, end).start).toEqual(end);
        const monthLength = new Date(
          Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0),
        ).getUTCDate();
        expect(start.getUTCDate()).toBe(Math.min(anchor.getUTCDate(), monthLength));
        expect(start.getUTCHours()).toBe(anchor.getUTCHours());
        expect(start.getUTCMinutes()).toBe(anchor.getUTCMinutes());
        const months =
          (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth();
        expect(months).toBe(1);
      }),
      { seed: 20261122, numRuns: 2000 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { newRowId, secureRandomBytes } from './ids';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const madeAt = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('newRowId', () => {
  it('makes UUIDv7s led by the time they were made, so later rows sort after earlier ones', async () => {
    const batches: string[][] = [];
    for (let b = 0; b < 5; b++) {
      batches.push(Array.from({ length: 200 }, () => newRowId()));
      await sleep(3);
    }
    const ids = batches.flat();
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Each batch was made milliseconds after the one before: all its ids sort after that one's.
    for (let b = 1; b < batches.length; b++) {
      const previous = batches[b - 1] ?? [];
      expect((batches[b] ?? []).every((id) => previous.every((earlier) => earlier < id))).toBe(true);
    }
    expect(Math.abs(madeAt(newRowId()) - Date.now())).toBeLessThan(1000);
  });
});

describe('secureRandomBytes', () => {
  it('never hands out the same bytes twice, across refills of its pool', () => {
    const draws = Array.from({ length: 1000 }, () => secureRandomBytes(16).toString('hex'));
    expect(new Set(draws).size).toBe(draws.length);
    expect(secureRandomBytes(10_000)).toHaveLength(10_000);
  });
});

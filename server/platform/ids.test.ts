import { describe, expect, it, vi } from 'vitest';
import { isUuid, newRowId, secureRandomBytes } from './ids';

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

  it('grows with every id made, even within one millisecond: a batch’s rows sort in the order given', () => {
    // A batch or an import chunk writes its cases with one created_at; their order in a list is
    // then their ids' order, which must be the order they were made in.
    const instant = Date.now() + 60_000;
    const frozen = vi.spyOn(Date, 'now').mockReturnValue(instant);
    try {
      const ids = Array.from({ length: 5000 }, () => newRowId());
      expect(ids.every((id, i) => i === 0 || (ids[i - 1] ?? '') < id)).toBe(true);
      expect(new Set(ids.map(madeAt))).toEqual(new Set([instant]));
      // A clock set back does not make a smaller id.
      frozen.mockReturnValue(instant - 30_000);
      expect(newRowId() > (ids.at(-1) ?? '')).toBe(true);
    } finally {
      frozen.mockRestore();
    }
  });
});

describe('secureRandomBytes', () => {
  it('never hands out the same bytes twice, across refills of its pool', () => {
    const draws = Array.from({ length: 1000 }, () => secureRandomBytes(16).toString('hex'));
    expect(new Set(draws).size).toBe(draws.length);
    expect(secureRandomBytes(10_000)).toHaveLength(10_000);
  });
});

describe('isUuid', () => {
  it("takes the ids rows are given and refuses what only looks like one (a case's public id, a truncated or padded UUID)", () => {
    expect(isUuid(newRowId())).toBe(true);
    expect(isUuid('9b2f4c1e-8a3d-4e5f-9c6b-7d8e9f0a1b2c')).toBe(true);
    expect(isUuid('aB3dE5fG7hJ9kL1m')).toBe(false);
    expect(isUuid('9b2f4c1e-8a3d-4e5f-9c6b-7d8e9f0a1b2')).toBe(false);
    expect(isUuid(' 9b2f4c1e-8a3d-4e5f-9c6b-7d8e9f0a1b2c')).toBe(false);
    expect(isUuid('')).toBe(false);
  });
});

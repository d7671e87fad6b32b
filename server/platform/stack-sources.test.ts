import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceMappedFrames } from './stack-sources';

describe('sourceMappedFrames', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'stack-sources-'));
  const bundle = path.join(dir, 'out', 'bundle.mjs');
  writeFileSync(path.join(dir, 'unmapped.mjs'), '');
  // Line 3 of the bundle comes from line 10 of ../src/original.ts (relative to the map's folder).
  mkdirSync(path.dirname(bundle));
  writeFileSync(
    `${bundle}.map`,
    JSON.stringify({ version: 3, sources: ['../src/original.ts'], names: [], mappings: 'AAAA;;AASA' }),
  );
  const source = path.relative(process.cwd(), path.join(dir, 'src', 'original.ts'));

  it('names a bundled frame by its source, read from the map beside the file', () => {
    expect(sourceMappedFrames(`    at handler (${bundle}:3:1)`)).toBe(`    at handler (${source}:10:1)`);
    expect(sourceMappedFrames(`    at file://${bundle}:3:1`)).toBe(`    at ${source}:10:1`);
  });

  it('leaves frames without a map, and the runtime’s own, as they are', () => {
    const frames = [
      `    at other (${path.join(dir, 'unmapped.mjs')}:3:1)`,
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
    ].join('\n');
    expect(sourceMappedFrames(frames)).toBe(frames);
  });
});

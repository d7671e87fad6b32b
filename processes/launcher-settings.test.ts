import { describe, expect, it } from 'vitest';
import { defaultWebProcesses } from './launcher-settings';

describe('the web processes npm start runs when WEB_PROCESSES is unset', () => {
  it('is one per core, less one while the embedded database shares the machine', () => {
    expect(defaultWebProcesses(8, false)).toBe(8);
    expect(defaultWebProcesses(8, true)).toBe(7);
    expect(defaultWebProcesses(2, true)).toBe(1);
  });

  it('is never fewer than one', () => {
    expect(defaultWebProcesses(1, true)).toBe(1);
    expect(defaultWebProcesses(1, false)).toBe(1);
  });
});

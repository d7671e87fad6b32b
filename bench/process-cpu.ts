import { readFileSync } from 'node:fs';

export const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** A process's CPU time so far from /proc, in ms, and the part spent in the kernel; zero once it is gone. */
export function processCpu(pid: number): { total: number; kernel: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]) * CLOCK_TICK_MS;
    const kernel = Number(fields[12]) * CLOCK_TICK_MS;
    return { total: user + kernel, kernel };
  } catch {
    return { total: 0, kernel: 0 };
  }
}

export function processCpuMs(pid: number): number {
  return processCpu(pid).total;
}

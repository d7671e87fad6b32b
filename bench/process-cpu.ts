import { readdirSync, readFileSync } from 'node:fs';

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

/** pid → its children's pids, for every process on the machine. */
function processTree(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** `root` and every process below it: a launcher's web and worker processes, a postmaster's backends. */
export function descendants(root: number): number[] {
  const tree = processTree();
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(tree.get(pid) ?? []));
  }
  return out;
}

/** The CPU time so far of `root` and everything below it, in ms. */
export function treeCpuMs(root: number): number {
  return descendants(root).reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

/** A direct child of this process running `command` (the embedded postmaster: `postgres`). */
export function childNamed(command: string): number | null {
  for (const pid of processTree().get(process.pid) ?? []) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command) return pid;
    } catch {
      // gone
    }
  }
  return null;
}

export interface ProcessMemory {
  pid: number;
  /** What the process runs: its entry file (web.mjs, worker.mjs, launcher.mjs) or its command. */
  role: string;
  rssMb: number;
  peakMb: number;
}

/** Resident memory of `root` and every process below it, now and at its peak. */
export function treeMemory(root: number): ProcessMemory[] {
  return descendants(root).flatMap((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (field: string) =>
        Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? Number.NaN);
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const entry = argv.find((arg) => /\.(ts|m?js)$/.test(arg));
      const role = entry ? (entry.split('/').pop() ?? entry) : (argv[0] ?? String(pid));
      return [{ pid, role, rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }];
    } catch {
      return [];
    }
  });
}

/**
 * The CPU time so far of `root` and everything below it, in ms, by role (what each process runs,
 * as `treeMemory` names it: web.mjs, worker.mjs, launcher.mjs, postgres…).
 */
export function treeCpuByRole(root: number): Map<string, number> {
  const byRole = new Map<string, number>();
  for (const { pid, role } of treeMemory(root)) byRole.set(role, (byRole.get(role) ?? 0) + processCpuMs(pid));
  return byRole;
}

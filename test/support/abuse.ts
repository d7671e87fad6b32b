import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { RunningApp } from './app';

function statusMb(app: RunningApp, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${app.process.pid}/status`, 'utf8');
  const kb = Number(status.match(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm'))?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no ${field} for the app process`);
  return kb / 1024;
}

/** The app process's resident memory in MB (Linux /proc), to show a request did not balloon it. */
export function residentMb(app: RunningApp): number {
  return statusMb(app, 'VmRSS');
}

/**
 * The app's peak resident memory since the last `resetPeakResident`, in MB: a body held for a
 * moment and let go shows here, where the resident memory afterwards would miss it.
 */
export function peakResidentMb(app: RunningApp): number {
  return statusMb(app, 'VmHWM');
}

/** Starts the app's peak resident memory again from what it holds now (Linux: clear_refs 5). */
export function resetPeakResident(app: RunningApp): void {
  writeFileSync(`/proc/${app.process.pid}/clear_refs`, '5');
}

/** A listening socket's state in the kernel's TCP tables. */
const TCP_LISTEN = '0A';

/**
 * The connections the app process holds open on its port, as their clients' ports (Linux: its
 * descriptors' socket inodes matched against the kernel's TCP tables), the listening socket left
 * out. A connection the process has closed is gone from here even while the kernel still sends
 * what it had queued.
 */
export function heldConnections(app: RunningApp): number[] {
  const pid = app.process.pid;
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed while we listed it
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const [, local = '', remote = '', state, , , , , , inode = ''] = line.trim().split(/\s+/);
      if (state === TCP_LISTEN || !inodes.has(inode)) continue;
      const port = (address: string) => Number.parseInt(address.split(':').at(-1) ?? '', 16);
      if (port(local) === app.port) ports.push(port(remote));
    }
  }
  return ports;
}

/** CPU time (user and system) the app process has used so far, in ms (Linux /proc, 10 ms ticks). */
export function cpuMs(app: RunningApp): number {
  const stat = readFileSync(`/proc/${app.process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface AbusiveAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Bytes the client had written when the answer arrived (or it gave up). */
  sentBytes: number;
}

/**
 * Streams up to `totalBytes` of `chunk` repeated as a chunked body (no Content-Length), as fast as
 * the server takes it, and stops sending once the server answers: what a client that never
 * declares its size looks like. Resolves with the answer the server gave.
 */
export function postChunked(
  url: string,
  options: { totalBytes: number; headers?: Record<string, string>; chunk?: Buffer; preamble?: string },
): Promise<AbusiveAnswer> {
  const chunk = options.chunk ?? Buffer.alloc(64 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...options.headers } }, (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentBytes: sent });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (options.preamble) req.write(options.preamble);
    const pump = () => {
      while (!answered && sent < options.totalBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Sends only the headers of a request declaring `contentLength` bytes, and waits for the answer. */
export function postDeclared(
  url: string,
  options: { contentLength: number; headers?: Record<string, string> },
): Promise<AbusiveAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...options.headers, 'Content-Length': String(options.contentLength) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentBytes: 0 });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.flushHeaders();
  });
}

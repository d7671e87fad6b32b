import { readFileSync, writeFileSync } from 'node:fs';
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

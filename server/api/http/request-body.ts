import type { IncomingMessage } from 'node:http';
import { AppError } from '@/server/platform/errors';

/** The most any API, console (tRPC) or sign-in request may send. */
export const API_BODY_LIMIT_BYTES = 1_000_000;
/** The most an identity upload (a document and a selfie, as one form) may send. */
export const UPLOAD_BODY_LIMIT_BYTES = 25_000_000;

/**
 * The body limit of a path, as the web process applies it to a declared Content-Length before
 * any route runs; the routes count what actually arrives with the same limits.
 */
export function bodyLimitFor(pathname: string): number {
  return /^\/v\/[^/]+\/identity\/?$/.test(pathname) ? UPLOAD_BODY_LIMIT_BYTES : API_BODY_LIMIT_BYTES;
}

/**
 * Reads a request's body, counting the bytes as they arrive, and gives up with
 * PAYLOAD_TOO_LARGE the moment they pass `limit`, whether or not the client declared a length:
 * a chunked body is never buffered whole before it is judged. What the client still sends after
 * that is never read (the web process's request time-out ends the connection).
 */
export async function readRequestBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limit) throw new AppError('PAYLOAD_TOO_LARGE', tooLargeDetail(limit));
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      reader.releaseLock();
      throw new AppError('PAYLOAD_TOO_LARGE', tooLargeDetail(limit));
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * readRequestBody for node's own request object (the REST facade's): the same limit, counted as
 * the bytes arrive. Past the limit it stops reading and leaves the connection as it is, so the
 * 413 can still be written on it. Rejects with the stream's error when the client goes away
 * before the body's end.
 */
export function readIncomingBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new AppError('PAYLOAD_TOO_LARGE', tooLargeDetail(limit)));
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const settle = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFailure);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        settle();
        req.pause();
        reject(new AppError('PAYLOAD_TOO_LARGE', tooLargeDetail(limit)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      settle();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onFailure = (error: Error) => {
      settle();
      reject(error);
    };
    const onClose = () => onFailure(new Error('the request ended before its body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFailure);
    req.on('close', onClose);
  });
}

function tooLargeDetail(limit: number): string {
  return `The request body is larger than ${limit / 1_000_000} MB.`;
}

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

function tooLargeDetail(limit: number): string {
  return `The request body is larger than ${limit / 1_000_000} MB.`;
}

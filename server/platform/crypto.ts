import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export function sha256Hex(input: string): string {
  return createHash('sha256').update(input).digest('hex');
}

export function hmacSha256Hex(key: Buffer, input: string): string {
  return createHmac('sha256', key).update(input).digest('hex');
}

/** Compares two secrets without leaking where they first differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(sha256Hex(a), 'hex');
  const right = Buffer.from(sha256Hex(b), 'hex');
  return timingSafeEqual(left, right) && a.length === b.length;
}

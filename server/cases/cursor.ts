import { z } from 'zod';
import { AppError } from '@/server/platform/errors';

/**
 * A keyset position in a newest-first list: the (created_at, id) of the item the page starts
 * after, and which way to walk. Opaque to clients (base64url JSON); a tampered or foreign cursor
 * is a 422, never a 500.
 */
export interface Cursor {
  createdAt: Date;
  id: string;
  direction: 'next' | 'previous';
}

const cursorJson = z.object({
  t: z.iso.datetime(),
  i: z.uuid(),
  d: z.enum(['n', 'p']),
});

export function encodeCursor(cursor: Cursor): string {
  const json = JSON.stringify({
    t: cursor.createdAt.toISOString(),
    i: cursor.id,
    d: cursor.direction === 'next' ? 'n' : 'p',
  });
  return Buffer.from(json).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  try {
    const parsed = cursorJson.parse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return {
      createdAt: new Date(parsed.t),
      id: parsed.i,
      direction: parsed.d === 'n' ? 'next' : 'previous',
    };
  } catch {
    throw new AppError('VALIDATION_ERROR', 'cursor: not a cursor this API issued');
  }
}

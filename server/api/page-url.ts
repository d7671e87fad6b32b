import { env } from '@/server/platform/env';

/**
 * The `next`/`previous` URL of a cursor-paginated list: every filter the client used is kept and
 * only the cursor is replaced. Null when there is no such page.
 */
export function pageUrl(
  path: `/v1/${string}`,
  filters: Record<string, string | undefined>,
  cursor: string | null,
): string | null {
  if (cursor === null) return null;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (key !== 'cursor' && value !== undefined) params.set(key, value);
  }
  params.set('cursor', cursor);
  return `${env().BASE_URL}${path}?${params.toString()}`;
}

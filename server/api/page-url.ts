/**
 * The `next`/`previous` URL of a cursor-paginated list, on the API's base URL (BASE_URL, from the
 * request's context): every filter the client used is kept and only the cursor is replaced. Null
 * when there is no such page.
 */
export function pageUrl(
  apiBase: string,
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
  return `${apiBase}${path}?${params.toString()}`;
}

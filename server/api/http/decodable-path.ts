/**
 * Whether every segment of a path is valid percent-encoding. One that is not cannot name anything:
 * the API answers its JSON 400 (serve-rest-api.ts) and every other path a plain 404 (the web
 * process, processes/web.ts), where Next.js would answer a bare 500.
 */
export function isDecodablePath(pathname: string): boolean {
  try {
    for (const segment of pathname.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

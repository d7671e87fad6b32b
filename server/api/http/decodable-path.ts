/**
 * Whether every segment of a path is valid percent-encoding. One that is not cannot name anything:
 * the API answers its JSON 400 (serve-rest-api.ts) and a verification link the plain "not found"
 * (proxy.ts), where Next.js would answer a bare 500.
 */
export function isDecodablePath(pathname: string): boolean {
  try {
    for (const segment of pathname.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

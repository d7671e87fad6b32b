import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PageScript } from '@/server/api/page-kit/method-routes';
import { PASSKEY_SCRIPT_PATH } from '@/server/verification/methods/passkey/page-script';

/**
 * The pages' passkey script, one file: @simplewebauthn/browser's own minified bundle (3.8 KB
 * gzipped; it sets `SimpleWebAuthnBrowser`), then our few lines (passkey-page.js). Both are read by
 * their paths at run time (scripts/runtime-files.mjs copies them into the image).
 */
const FILES = [
  path.join(
    process.cwd(),
    'node_modules',
    '@simplewebauthn',
    'browser',
    'dist',
    'bundle',
    'index.umd.min.js',
  ),
  path.join(process.cwd(), 'server', 'verification', 'methods', 'passkey', 'routes', 'passkey-page.js'),
];

export const passkeyScript: PageScript = {
  path: PASSKEY_SCRIPT_PATH,
  load: (): Buffer => Buffer.concat(FILES.flatMap((file) => [readFileSync(file), Buffer.from('\n')])),
};

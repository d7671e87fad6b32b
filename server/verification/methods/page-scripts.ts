import type { PageScript } from '@/server/api/page-kit/method-routes';
import { passkeyScript } from './passkey/routes/passkey-script';

/**
 * The methods' page scripts (each in its method's `routes/`), which the web process serves with its
 * static files (server/api/http/static-assets.ts). Apart from `routes.ts`, so that serving them
 * loads no method's handlers into the web process itself.
 */
export const PAGE_SCRIPTS: readonly PageScript[] = [passkeyScript];

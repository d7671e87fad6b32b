import { AsyncLocalStorage } from 'node:async_hooks';
import { secureRandomBytes } from './ids';

/** What every log line written while serving a request says about that request. */
export interface RequestScope {
  requestId: string;
}

/**
 * The web process (processes/web.ts) runs each request inside this scope, and the logger reads
 * it, so every line written while serving a request carries its id without passing it around.
 *
 * Kept on `globalThis` because Next.js bundles each route separately from the web process's own
 * modules: a module-level store would be a different instance in every bundle, and the route
 * handlers would never see the scope the web process opened.
 */
const KEY = Symbol.for('vouch.requestScope');
const holder = globalThis as { [KEY]?: AsyncLocalStorage<RequestScope> };
holder[KEY] ??= new AsyncLocalStorage<RequestScope>();
const storage: AsyncLocalStorage<RequestScope> = holder[KEY];

export function runInRequestScope<T>(scope: RequestScope, work: () => T): T {
  return storage.run(scope, work);
}

export function currentRequestScope(): RequestScope | undefined {
  return storage.getStore();
}

/** `req_` and 24 base64url characters (144 random bits): unique without coordination. */
export function newRequestId(): string {
  return `req_${secureRandomBytes(18).toString('base64url')}`;
}

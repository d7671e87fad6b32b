import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { APIError, betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { magicLink } from 'better-auth/plugins/magic-link';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import {
  appSecrets,
  authAccounts,
  authRateLimits,
  authSessions,
  authUsers,
  authVerifications,
} from '@/db/schema';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import { systemClock } from '@/server/platform/clock';
import type { Env } from '@/server/platform/env';
import { libraryLogger } from '@/server/platform/logger';
import { sendSignInLink } from './console-mail';
import { CONSOLE_COOKIE_PREFIX } from './session-cookie';
import { ONE_TIME_PASSWORD_DAYS, oneTimePasswordExpired } from './team-members';

/** better-auth is mounted here (app/api/auth/[...all]/route.ts). */
export const AUTH_BASE_PATH = '/api/auth';
export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60;
export const MIN_PASSWORD_LENGTH = 12;

/**
 * The session cookie's signing key: AUTH_SECRET when the operator sets one, otherwise a random key
 * generated on first start and kept in the database, so every app process sharing the database
 * signs and checks cookies with the same key.
 */
async function sessionSecret(db: Db, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await db
    .insert(appSecrets)
    .values({ name: 'auth_secret', value: randomBytes(32).toString('base64url') })
    .onConflictDoNothing();
  const [row] = await db.select().from(appSecrets).where(eq(appSecrets.name, 'auth_secret'));
  if (!row) throw new Error('auth secret missing after insert');
  return row.value;
}

/**
 * Browsers keep Secure cookies only from secure origins, which include http://localhost; a plain
 * http deployment on another host would otherwise never keep a session.
 */
function secureCookies(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === 'https:' || url.hostname === 'localhost' || url.hostname === '127.0.0.1';
}

/**
 * Set while `signInLinkInPlace` asks better-auth for a link: the link is handed back to the
 * caller instead of being mailed. Only code in this process can set it, never an HTTP request.
 */
const linkHandover = new AsyncLocalStorage<{ url?: string }>();

function buildAuth(db: Db, config: Env, secret: string) {
  return betterAuth({
    // Stryker disable next-line StringLiteral: equivalent; the name shows only in features not used here (two-factor issuers).
    appName: 'Vouch',
    baseURL: config.BASE_URL,
    basePath: AUTH_BASE_PATH,
    secret,
    // Stryker disable next-line ArrayDeclaration: equivalent; better-auth trusts baseURL's origin in any case (kept explicit as the one origin allowed).
    trustedOrigins: [config.BASE_URL],
    database: drizzleAdapter(db, {
      provider: 'pg',
      schema: {
        user: authUsers,
        session: authSessions,
        account: authAccounts,
        verification: authVerifications,
        rateLimit: authRateLimits,
      },
    }),
    emailAndPassword: {
      enabled: true,
      // People join a team only through the operator's CLI or an admin's invitation.
      disableSignUp: true,
      minPasswordLength: MIN_PASSWORD_LENGTH,
    },
    // Stryker disable next-line ObjectLiteral: equivalent; these are better-auth's defaults today, kept explicit so an upgrade cannot change them unseen.
    session: {
      expiresIn: 60 * 60 * 24 * 7,
      updateAge: 60 * 60 * 24,
    },
    databaseHooks: {
      session: {
        create: {
          // better-auth makes the session only once the password was verified: a wrong password
          // is answered as for any account before this runs, so only whoever holds the password
          // learns that it expired, and no one learns which accounts lie unused.
          before: async (session, endpoint) => {
            if (endpoint?.path !== '/sign-in/email') return;
            if (await oneTimePasswordExpired(db, session.userId, systemClock())) {
              throw new APIError('UNAUTHORIZED', {
                code: 'ONE_TIME_PASSWORD_EXPIRED',
                message: `This one-time password has expired (it worked for ${ONE_TIME_PASSWORD_DAYS} days). Ask for a sign-in link instead, then choose a password.`,
              });
            }
          },
        },
      },
    },
    plugins: [
      magicLink({
        disableSignUp: true,
        expiresIn: SIGN_IN_LINK_TTL_SECONDS,
        storeToken: 'hashed',
        sendMagicLink: async ({ email, url }) => {
          const handover = linkHandover.getStore();
          if (handover) handover.url = url;
          else await sendSignInLink(db, { to: email, url });
        },
      }),
    ],
    rateLimit: {
      // On in every environment, in the database so the limit holds across app processes.
      enabled: true,
      storage: 'database',
      window: 60,
      max: 100,
      customRules: {
        '/sign-in/email': { window: 60, max: 10 },
        '/sign-in/magic-link': { window: 60, max: 5 },
        '/change-password': { window: 60, max: 5 },
      },
    },
    advanced: {
      useSecureCookies: secureCookies(config.BASE_URL),
      cookiePrefix: CONSOLE_COOKIE_PREFIX,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax' },
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    // better-auth's default, kept explicit so an upgrade cannot turn it on.
    // Stryker disable next-line all: better-auth never sends telemetry under a test runner, so no test can see this setting.
    telemetry: { enabled: false },
    // Its error lines can hold a failed statement's parameters (people's data).
    logger: libraryLogger,
  });
}

export type ConsoleAuth = ReturnType<typeof buildAuth>;

const instances = new WeakMap<Db, Promise<ConsoleAuth>>();

/** One better-auth instance per database pool (the app has one; tests may have several). */
export function consoleAuth(db: Db, config: Env): Promise<ConsoleAuth> {
  let instance = instances.get(db);
  if (!instance) {
    instance = sessionSecret(db, config.AUTH_SECRET).then((secret) => buildAuth(db, config, secret));
    instance.catch(() => instances.delete(db));
    instances.set(db, instance);
  }
  return instance;
}

/**
 * A sign-in link (better-auth's own: once, within 15 minutes) for someone who has just proven
 * their address another way, handed to the caller instead of mailed: an invitee without an
 * account who opened the invitation's link from their mailbox signs in with it at once.
 */
export async function signInLinkInPlace(
  db: Db,
  config: Env,
  input: { email: string; callbackPath: string; headers: Headers },
): Promise<string> {
  const auth = await consoleAuth(db, config);
  const handover: { url?: string } = {};
  await linkHandover.run(handover, () =>
    auth.api.signInMagicLink({
      body: { email: input.email, callbackURL: input.callbackPath },
      headers: input.headers,
    }),
  );
  if (!handover.url) throw new Error('better-auth made no sign-in link');
  return handover.url;
}

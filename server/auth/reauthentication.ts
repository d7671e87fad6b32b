import type { Queryable } from '@/db/client';
import { AppError } from '@/server/platform/errors';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { checkPassword } from './team-members';

/**
 * How recent a sign-in must be to stand in for the current password (for an account that has
 * none): a session stolen later cannot set one.
 */
export const FRESH_SIGN_IN_MS = 10 * 60 * 1000;

/**
 * A re-entered current password, before something a stolen session must not be able to do
 * (reveal a secret, change the password). Wrong guesses spend the account's password budgets, the
 * ones sign-in spends (per account and client address, and per account from all addresses).
 */
export async function confirmCurrentPassword(
  ctx: {
    db: Queryable;
    rateLimiters: RateLimiters;
    clientAddress: string;
    user: { id: string; email: string };
  },
  password: string,
): Promise<void> {
  const correct = await ctx.rateLimiters.attemptForAccount(
    'password',
    { account: ctx.user.email, address: ctx.clientAddress },
    () => checkPassword(ctx.db, ctx.user.id, password),
    (ok) => ok,
  );
  if (!correct) throw new AppError('FORBIDDEN', 'That password is not correct.');
}

/** Whether the session began with a sign-in recent enough to stand in for a password. */
export function signedInRecently(signedInAt: Date, now: Date): boolean {
  return now.getTime() - signedInAt.getTime() <= FRESH_SIGN_IN_MS;
}

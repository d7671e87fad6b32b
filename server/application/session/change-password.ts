import type { Db } from '@/db/client';
import { consoleAuth } from '@/server/auth/console-auth';
import { confirmCurrentPassword, signedInRecently } from '@/server/auth/reauthentication';
import {
  clearPasswordChangeRequired,
  passwordChangeRequired,
  readPasswordHash,
  replacePassword,
} from '@/server/auth/team-members';
import type { Clock } from '@/server/platform/clock';
import type { Env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import type { RateLimiters } from '@/server/rate-limits/limiters';

export interface PasswordChangeContext {
  db: Db;
  env: Env;
  clock: Clock;
  rateLimiters: RateLimiters;
  clientAddress: string;
  user: { id: string; email: string };
  /** When the session began: a link-only account may set a password only soon after signing in. */
  signedInAt: Date;
  /** The request's headers, which carry the session better-auth acts on. */
  sessionHeaders: Headers;
}

/**
 * Sets a new password (replacing the CLI's one-time password, or adding one to a link-only
 * account). A stolen session must not be enough: a user with a password re-enters it, but one who
 * signed in with the CLI's one-time password within the last 10 minutes is not asked for it again
 * (the sign-in just proved it); a link-only user must have signed in within the last 10 minutes.
 * Every other session of the user ends, so whoever else held one is signed out.
 */
export async function changePassword(
  ctx: PasswordChangeContext,
  input: { currentPassword?: string; newPassword: string },
): Promise<void> {
  const auth = await consoleAuth(ctx.db, ctx.env);
  const hasPassword = (await readPasswordHash(ctx.db, ctx.user.id)) !== null;
  const now = ctx.clock();
  const choosingOwn = hasPassword && (await passwordChangeRequired(ctx.db, ctx.user.id));
  if (choosingOwn && !input.currentPassword && signedInRecently(ctx.signedInAt, now)) {
    await replacePassword(ctx.db, ctx.user.id, input.newPassword, now);
  } else if (hasPassword) {
    if (!input.currentPassword) {
      throw new AppError(
        'FORBIDDEN',
        choosingOwn
          ? 'Sign in again with your one-time password to choose your own (within 10 minutes of signing in).'
          : 'Enter your current password.',
      );
    }
    await confirmCurrentPassword(ctx, input.currentPassword);
    await auth.api.changePassword({
      body: { currentPassword: input.currentPassword, newPassword: input.newPassword },
      headers: ctx.sessionHeaders,
    });
  } else {
    if (!signedInRecently(ctx.signedInAt, now)) {
      throw new AppError(
        'FORBIDDEN',
        'To set a password, sign in again with a new e-mail link first (within the last 10 minutes).',
      );
    }
    await auth.api.setPassword({ body: { newPassword: input.newPassword }, headers: ctx.sessionHeaders });
  }
  await auth.api.revokeOtherSessions({ headers: ctx.sessionHeaders });
  await clearPasswordChangeRequired(ctx.db, ctx.user.id, now);
}

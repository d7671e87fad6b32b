import { desc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import type { Db } from '@/db/client';
import { mailOutbox } from '@/db/schema';
import type { ConsoleClient } from './console-client';

/** The token of the newest invitation mailed to `email` (its link: /console/invitation?token=…). */
export async function latestInvitationToken(db: Db, email: string): Promise<string> {
  const mails = await db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.to, email))
    .orderBy(desc(mailOutbox.createdAt));
  for (const mail of mails) {
    const token = mail.text.match(/\/console\/invitation\?token=([0-9A-Za-z]+)/)?.[1];
    if (token) return token;
  }
  throw new Error(`no invitation mailed to ${email}`);
}

/**
 * What an invitee without an account does with the newest invitation mailed to `email`: accepts
 * it on the link's page, then opens the sign-in link the page is handed, which signs `browser` in.
 * Returns that sign-in link.
 */
export async function joinAsNewUser(browser: ConsoleClient, db: Db, email: string): Promise<string> {
  const token = await latestInvitationToken(db, email);
  const accepted = await browser.mutate<{ sign_in_url: string }>('console.invitations.acceptAsNewUser', {
    token,
  });
  expect(accepted.status, JSON.stringify(accepted.error)).toBe(200);
  const link = accepted.data?.sign_in_url ?? '';
  const opened = await browser.openLink(link);
  expect(opened.status).toBe(302);
  expect(opened.headers.get('location')).not.toMatch(/error/);
  return link;
}

/** Invites `email` as `role` from `inviter`'s console and has them join as a new user in `browser`. */
export async function inviteNewUser(
  inviter: ConsoleClient,
  browser: ConsoleClient,
  db: Db,
  input: { email: string; role: 'owner' | 'admin' | 'viewer' },
): Promise<string> {
  const invited = await inviter.mutate('console.members.invite', input);
  expect(invited.status, JSON.stringify(invited.error)).toBe(200);
  return joinAsNewUser(browser, db, input.email);
}

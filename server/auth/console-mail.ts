import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { authUsers } from '@/db/schema';
import { enqueueMail } from '@/server/platform/outbox/enqueue-mail';

const LINK_LIFETIME = '15 minutes';

/**
 * The e-mail with a console sign-in link (better-auth's magic link), sent through the mail outbox.
 * better-auth asks for it for any address it is given; an address without an account gets no mail
 * (the caller gets the same answer either way), so the form cannot be used to mail strangers.
 */
export async function sendSignInLink(db: Db, input: { to: string; url: string }): Promise<void> {
  const [account] = await db
    .select({ id: authUsers.id })
    .from(authUsers)
    .where(eq(authUsers.email, input.to.trim().toLowerCase()));
  if (!account) return;
  await db.transaction((tx) =>
    enqueueMail(tx, {
      to: input.to,
      subject: 'Your Vouch console sign-in link',
      text: `Sign in to the Vouch console:\n\n${input.url}\n\nThe link works once and expires in ${LINK_LIFETIME}. If you did not ask for it, ignore this e-mail.`,
    }),
  );
}

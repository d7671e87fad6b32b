import type { Db } from '@/db/client';
import { enqueueMail } from '../mail/enqueue-mail';

const LINK_LIFETIME = '15 minutes';

/** The e-mail with a console sign-in link (better-auth's magic link), sent through the mail outbox. */
export async function sendSignInLink(db: Db, input: { to: string; url: string }): Promise<void> {
  await db.transaction((tx) =>
    enqueueMail(tx, {
      to: input.to,
      subject: 'Your Vouch console sign-in link',
      text: `Sign in to the Vouch console:\n\n${input.url}\n\nThe link works once and expires in ${LINK_LIFETIME}. If you did not ask for it, ignore this e-mail.`,
    }),
  );
}

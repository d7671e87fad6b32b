import { desc, eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { mailOutbox } from '@/db/schema';

/** The console sign-in link in the newest mail to `email` (an invitation or a requested link). */
export async function latestSignInLink(db: Db, email: string): Promise<string> {
  const [mail] = await db
    .select()
    .from(mailOutbox)
    .where(eq(mailOutbox.to, email))
    .orderBy(desc(mailOutbox.createdAt))
    .limit(1);
  const link = mail?.text.match(/https?:\/\/\S+\/api\/auth\/magic-link\/verify\S+/)?.[0];
  if (!link) throw new Error(`no sign-in link mailed to ${email}`);
  return link;
}

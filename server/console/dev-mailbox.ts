import { desc, eq, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '@/db/client';
import { cases, devMailbox } from '@/db/schema';
import { AppError } from '../trpc/errors';
import { router, sessionProcedure } from '../trpc/init';

const MAILBOX_PAGE = 50;

/**
 * The dev mailbox holds every mail the service sent. A console user sees the mail addressed to
 * themselves and the mail about their team's cases (it carries the case's `/v/<public_id>` link),
 * never another member's sign-in links nor another team's mail, even for the same recipient.
 */
export async function listTeamDevMail(db: Queryable, teamId: string, userEmail: string) {
  const aboutTeamCase = sql`exists (select 1 from ${cases} where ${cases.teamId} = ${teamId}
    and position('/v/' || ${cases.publicId} in ${devMailbox.text}) > 0)`;
  return db
    .select()
    .from(devMailbox)
    .where(or(eq(devMailbox.to, userEmail), aboutTeamCase))
    .orderBy(desc(devMailbox.createdAt))
    .limit(MAILBOX_PAGE);
}

export const consoleMailboxRouter = router({
  list: sessionProcedure.input(z.object({}).optional()).query(async ({ ctx }) => {
    if (ctx.env.SMTP_URL)
      throw new AppError('NOT_FOUND', 'Mail goes to a real mail server here (SMTP_URL is set).');
    const rows = await listTeamDevMail(ctx.db, ctx.teamId, ctx.user.email);
    return rows.map((m) => ({
      id: m.id,
      to: m.to,
      subject: m.subject,
      text: m.text,
      created_at: m.createdAt.toISOString(),
    }));
  }),
});

import { desc, eq, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '@/db/client';
import { cases, devMailbox } from '@/db/schema';
import { AppError } from '../trpc/errors';
import { managerProcedure, router } from '../trpc/init';

const MAILBOX_PAGE = 50;

/**
 * The dev mailbox holds every mail and text message the service would have sent. A console user
 * sees the mail addressed to themselves and the messages about their team's cases (a mail carries
 * the case's `/v/<public_id>` link, a text message its case id), never another member's sign-in
 * links nor another team's messages, even for the same recipient.
 */
export async function listTeamDevMail(db: Queryable, teamId: string, userEmail: string) {
  const aboutTeamCase = sql`exists (select 1 from ${cases} where ${cases.teamId} = ${teamId}
    and (${cases.id} = ${devMailbox.caseId} or position('/v/' || ${cases.publicId} in ${devMailbox.text}) > 0))`;
  return db
    .select()
    .from(devMailbox)
    .where(or(eq(devMailbox.to, userEmail), aboutTeamCase))
    .orderBy(desc(devMailbox.createdAt))
    .limit(MAILBOX_PAGE);
}

export const consoleMailboxRouter = router({
  /**
   * Owners and admins only: the messages carry the links and codes that complete the team's
   * verifications, which a viewer must not be able to use.
   */
  list: managerProcedure.input(z.object({}).optional()).query(async ({ ctx }) => {
    if (ctx.env.SMTP_URL && ctx.env.SMS_PROVIDER !== 'dev') {
      throw new AppError('NOT_FOUND', 'Messages go to a real mail server and SMS provider here.');
    }
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
